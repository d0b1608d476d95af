import { isIP } from "node:net";

/** `::ffff:1.2.3.4` (IPv4 on an IPv6 socket) → `1.2.3.4`. */
export function normalizeIp(ip: string): string {
  if (!ip.includes(":") && ip.trim() === ip) return ip; // IPv4 as the socket gives it: nothing to do
  const s = ip.trim().toLowerCase();
  return s.startsWith("::ffff:") && isIP(s.slice(7)) === 4 ? s.slice(7) : s;
}

/**
 * The client address: the socket's peer, unless that peer is a configured trusted proxy; then the
 * right-most `X-Forwarded-For` hop that is not itself a trusted proxy (hops further left were written
 * by the client and prove nothing). A forwarded value that is not an IP address is ignored.
 */
export function clientIp(socketIp: string | null | undefined, forwardedFor: string | null, trusted: ReadonlySet<string>): string {
  const peer = socketIp ? normalizeIp(socketIp) : "unknown";
  if (!forwardedFor || !trusted.has(peer)) return peer;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(hops[i]!);
    if (!hop) continue;
    if (!isIP(hop)) return peer;
    if (!trusted.has(hop)) return hop;
  }
  return peer;
}

/**
 * The rate-limit key of an address: IPv4 as is; IPv6 by its /64, since one subscriber usually holds a
 * whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function rateKey(ip: string): string {
  if (!ip.includes(":")) return ip;
  const [head, tail] = ip.split("::", 2) as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":") + "::/64";
}
