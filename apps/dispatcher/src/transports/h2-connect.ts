import http2 from "node:http2";
import tls from "node:tls";

/**
 * A hook on node:http2's `connect` for the provider sessions the libraries open themselves.
 *
 * 1. An HTTP/2 connection factory for firebase-admin. firebase-admin 14 opens each `sendEach`
 *    session with `http2.connect("https://fcm.googleapis.com", {...})`: the host is a constant and
 *    the HTTP/2 path ignores `httpAgent` (firebase-admin-node#2697). Node's own hook for "where
 *    does this session's socket come from" is the `createConnection` option, so while a route is
 *    active this adds one that dials the configured address, keeping fcm.googleapis.com as TLS
 *    server name and `:authority`. Frames, headers and bodies on the wire are still the library's.
 *    The route is set only for the synchronous extent of the library call (sendEach creates its
 *    session before its first await), so transports with different routes never mix.
 * 2. Bun 1.4's ClientHttp2Stream.setTimeout() forwards to session.setTimeout(), which adds a
 *    session 'timeout' listener per request that is only dropped when the whole session idles.
 *    Both libraries call it on every request, so on node-apn's long-lived connection the listener
 *    list grows without bound: a leak, a MaxListenersExceededWarning, and an O(n) copy per request
 *    (a quarter of the CPU after 30k requests). On provider sessions, streams get a real
 *    per-stream timer instead: same contract ('timeout' emitted, callback called), cleared on close.
 * Other origins pass through untouched.
 */

export const FCM_ORIGIN = "https://fcm.googleapis.com";
const PROVIDER_ORIGINS = new Set([FCM_ORIGIN, "https://api.push.apple.com", "https://api.sandbox.push.apple.com"]);

export interface FcmRoute {
  host: string;
  port: number;
  /** PEM to trust for the routed connection; the system store otherwise. */
  ca?: string;
}

let current: FcmRoute | null = null;
let installed = false;

function originOf(authority: unknown): string | null {
  try {
    if (typeof authority === "string") return new URL(authority).origin;
    if (authority instanceof URL) return authority.origin;
  } catch {
    // not a URL: not ours
  }
  return null;
}

/** Idempotent; called when a transport is created, never at import. */
export function installProviderSessionHook(): void {
  if (installed) return;
  installed = true;
  const original = http2.connect as (...args: unknown[]) => http2.ClientHttp2Session;
  function connect(this: unknown, authority: unknown, options?: unknown, listener?: unknown): http2.ClientHttp2Session {
    const origin = originOf(authority);
    if (!origin || !PROVIDER_ORIGINS.has(origin)) return original.apply(this, [...arguments]);
    const cb = typeof options === "function" ? options : listener;
    const opts = { ...(typeof options === "object" && options ? options : {}) } as http2.SecureClientSessionOptions;
    const route = origin === FCM_ORIGIN ? current : null;
    if (route) {
      // no Nagle: requests are small frames, and the runtime's own sockets do not delay them either
      opts.createConnection = () =>
        tls.connect({ host: route.host, port: route.port, servername: "fcm.googleapis.com", ca: route.ca, ALPNProtocols: ["h2"] }).setNoDelay(true);
    }
    const session = original.call(this, authority, opts, ...(cb ? [cb] : []));
    if (process.versions.bun) perStreamTimeouts(session);
    return session;
  }
  (http2 as { connect: unknown }).connect = connect;
}

type TimedStream = http2.ClientHttp2Stream & { __pushstackTimer?: ReturnType<typeof setTimeout> };

function perStreamTimeouts(session: http2.ClientHttp2Session): void {
  const request = session.request;
  session.request = function (this: http2.ClientHttp2Session, ...args: Parameters<typeof request>) {
    const stream = request.apply(this, args) as TimedStream;
    stream.setTimeout = function (this: TimedStream, ms: number, callback?: () => void) {
      if (this.__pushstackTimer) clearTimeout(this.__pushstackTimer);
      if (callback) this.once("timeout", callback);
      if (ms > 0) {
        const t = setTimeout(() => this.emit("timeout"), ms);
        t.unref?.();
        this.__pushstackTimer = t;
        this.once("close", () => clearTimeout(t));
      }
      return this;
    } as TimedStream["setTimeout"];
    return stream;
  } as typeof request;
}

/** Runs `fn` with FCM sessions opened inside it routed to `route` (plain call without a route). */
export function withFcmRoute<T>(route: FcmRoute | undefined, fn: () => T): T {
  if (!route) return fn();
  installProviderSessionHook();
  const prev = current;
  current = route;
  try {
    return fn();
  } finally {
    current = prev;
  }
}
