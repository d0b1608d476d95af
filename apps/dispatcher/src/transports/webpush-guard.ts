import dns from "node:dns";
import net from "node:net";

/**
 * Where a registered Web Push subscription may make the dispatcher send a request (SSRF guard).
 *
 * A subscription's endpoint comes from a browser, i.e. from anyone, so before any request:
 * - the URL must be https to a well-known browser push service, or to a host the operator listed
 *   in WEBPUSH_ALLOWED_HOSTS (`host` or `host:port`); plain http only for a listed host;
 * - the name must resolve only to public addresses: loopback, private, link-local (cloud
 *   metadata), CGNAT, multicast and reserved ranges are refused unless the host is listed.
 * The address check (checkResolved) runs before the request, on the system resolver. The request
 * itself resolves the name again, so a DNS answer that changes in between is not caught; only
 * the well-known push services' own names get there (any other host must be listed), so this
 * guards against a poisoned resolver rather than against the subscription's author.
 */

export const WELL_KNOWN_PUSH_HOSTS: readonly string[] = [
  "fcm.googleapis.com", // Chrome, Edge on Android, Opera, Samsung Internet, Brave
  "android.googleapis.com", // legacy Chrome endpoints
  "updates.push.services.mozilla.com", // Firefox
  "web.push.apple.com", // Safari
  "*.notify.windows.com", // Edge on Windows (WNS)
  "*.push.services.mozilla.com",
];

export type EndpointCheck =
  | { ok: true; url: URL; /** listed by the operator: private addresses and plain http allowed */ listed: boolean }
  | { ok: false; reason: string };

export interface AllowedHosts {
  /** `host` entries allow any port, `host:port` entries that port only. */
  matches(host: string, port: number): boolean;
}

export function parseAllowedHosts(list: readonly string[] | undefined): AllowedHosts {
  const any = new Set<string>();
  const exact = new Set<string>();
  for (const raw of list ?? []) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    // "host:port", "[v6]:port", "[v6]" or a bare host; a bare IPv6 literal has several colons.
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? (entry.split(":").length === 2 ? /^([^:]+):(\d+)$/.exec(entry) : null);
    if (m) {
      if (m[2]) exact.add(`${m[1]}:${Number(m[2])}`);
      else any.add(m[1]);
    } else {
      any.add(entry);
    }
  }
  return { matches: (host, port) => any.has(host) || exact.has(`${host}:${port}`) };
}

function isWellKnown(host: string): boolean {
  return WELL_KNOWN_PUSH_HOSTS.some((p) => (p.startsWith("*.") ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p));
}

/** Syntax and host policy, without DNS. */
export function checkEndpoint(endpoint: unknown, allowed: AllowedHosts): EndpointCheck {
  if (typeof endpoint !== "string" || endpoint.length > 2048) return { ok: false, reason: "endpoint is not a URL" };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, reason: "endpoint is not a URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "endpoint scheme not allowed" };
  if (url.username || url.password) return { ok: false, reason: "endpoint carries credentials" };
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const listed = allowed.matches(host, port);
  if (listed) return { ok: true, url, listed };
  if (url.protocol !== "https:") return { ok: false, reason: "plain http only for WEBPUSH_ALLOWED_HOSTS" };
  if (port !== 443 || !isWellKnown(host)) return { ok: false, reason: "endpoint host is not a known push service" };
  return { ok: true, url, listed: false };
}

function v4ToInt(ip: string): number {
  return ip.split(".").reduce((a, o) => a * 256 + Number(o), 0);
}

const V4_BLOCKED: [string, number][] = [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
  ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
];

function v4Public(ip: string): boolean {
  const n = v4ToInt(ip);
  return !V4_BLOCKED.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(v4ToInt(base) / 2 ** (32 - bits)));
}

/** The 8 hextets of an IPv6 address (handles "::" and an embedded dotted IPv4 tail). */
function v6Hextets(ip: string): number[] | null {
  let s = ip.toLowerCase().split("%")[0];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = v4ToInt(v4[1]);
    s = s.slice(0, -v4[1].length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const fill = s.includes("::") ? 8 - h.length - t.length : 0;
  const parts = [...h, ...Array(Math.max(0, fill)).fill("0"), ...t];
  if (parts.length !== 8) return null;
  return parts.map((p) => parseInt(p, 16));
}

/** True only for globally routable unicast addresses. */
export function isPublicAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 4) return v4Public(ip);
  if (family !== 6) return false;
  const h = v6Hextets(ip);
  if (!h) return false;
  const embeddedV4 = `${h[6] >> 8}.${h[6] & 255}.${h[7] >> 8}.${h[7] & 255}`;
  if (h.slice(0, 5).every((x) => x === 0) && (h[5] === 0xffff || h[5] === 0)) return h[5] === 0xffff ? v4Public(embeddedV4) : false; // mapped / compatible, ::, ::1
  if (h[0] === 0x64 && h[1] === 0xff9b) return v4Public(embeddedV4); // NAT64
  if ((h[0] & 0xfe00) === 0xfc00) return false; // unique local (incl. fd00:ec2::254 metadata)
  if ((h[0] & 0xffc0) === 0xfe80) return false; // link-local
  if ((h[0] & 0xff00) === 0xff00) return false; // multicast
  if (h[0] === 0x2001 && h[1] === 0x0db8) return false; // documentation
  if (h[0] === 0x0100 && h[1] === 0 && h[2] === 0 && h[3] === 0) return false; // discard
  if (h[0] === 0x2002) return v4Public(`${h[1] >> 8}.${h[1] & 255}.${h[2] >> 8}.${h[2] & 255}`); // 6to4
  return (h[0] & 0xe000) === 0x2000; // global unicast 2000::/3
}

export class EndpointRefusedError extends Error {
  override name = "EndpointRefusedError";
  readonly code = "EPUSHENDPOINTREFUSED";
}

export type ResolveAll = (hostname: string, options: dns.LookupAllOptions, cb: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/**
 * Resolves every address of `hostname` and refuses the name if any of them is not public (a name
 * that mixes public and private answers is refused outright). Resolves to null when allowed.
 */
export function checkResolved(hostname: string, resolveAll: ResolveAll = dns.lookup as unknown as ResolveAll): Promise<EndpointRefusedError | null> {
  return new Promise((resolve, reject) => {
    resolveAll(hostname, { all: true }, (err, addresses) => {
      if (err) return reject(err);
      resolve(!addresses.length || addresses.some((a) => !isPublicAddress(a.address)) ? new EndpointRefusedError(`push endpoint ${hostname} resolves to a non-public address`) : null);
    });
  });
}
