import tls from "node:tls";
import { MultiProvider, Provider, type ProviderOptions, type ResponseFailure } from "@parse/node-apn";
import { classifyApnsFailure } from "./classify";
import { installProviderSessionHook } from "./h2-connect";
import { buildApnsNotification, isValidContent } from "./payload";
import { APNS_MAX_PAYLOAD_BYTES, DEFAULT_TTL_SECONDS, KeyedSemaphores, Semaphore } from "./limits";
import { fail, unusableInput, type AppCredentials, type SendItem, type SendResult, type Transport } from "./types";

/**
 * APNs through @parse/node-apn with token auth (.p8): one Provider per (app id, credential
 * version), which keeps one HTTP/2 connection to the app's environment (sandbox or production)
 * and regenerates its ES256 provider token before the hour is up. The library's own retries are
 * off (connectionRetryLimit 0): it would re-send 429/5xx at once (it reads `Retry-After` with the
 * wrong case) and drop the header; retry.ts decides instead. A rotated credential gets a new
 * Provider at once; the old one shuts down when its last in-flight request ends.
 */

export interface ApnsTransportOptions {
  /** Dial this address instead of api(.sandbox).push.apple.com:443; TLS name and :authority stay Apple's. Tests. */
  connectTo?: { host: string; port: number };
  /** Extra CA (PEM) to trust for connectTo. Tests. */
  ca?: string;
  ttlSeconds?: number;
  /** Requests (HTTP/2 streams) in flight for the whole transport. */
  maxInFlight?: number;
  /**
   * ... and for one app; default 200 per connection. Bun's HTTP/2 client spends per stream in
   * proportion to the streams open on its session: 200 in flight cost ~60 us of CPU per request
   * where 1,000 cost ~110 us, for no gain in throughput.
   */
  maxInFlightPerApp?: number;
  requestTimeoutMs?: number;
  /** HTTP/2 connections per (app, credential); above 1, node-apn's MultiProvider round-robins them. */
  connectionsPerApp?: number;
}

interface ProviderEntry {
  version: string | number;
  provider: Provider | MultiProvider | null;
  bundleId: string;
  broken: SendResult | null;
  inflight: number;
  retired: boolean;
  onIdle?: () => void;
}

/** Device tokens are 32 bytes today; Apple says they may grow, so accept 32..100 bytes of hex. */
export function isPlausibleApnsToken(token: unknown): token is string {
  return typeof token === "string" && /^[0-9a-fA-F]{64,200}$/.test(token) && token.length % 2 === 0;
}

export function createApnsTransport(opts: ApnsTransportOptions = {}): Transport & { providerCount(): number } {
  installProviderSessionHook();
  const ttl = opts.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const inFlight = new Semaphore(opts.maxInFlight ?? 2000);
  const perApp = new KeyedSemaphores<number>(opts.maxInFlightPerApp ?? 200 * Math.max(1, Math.floor(opts.connectionsPerApp ?? 1)));
  const entries = new Map<number, ProviderEntry>();
  const retired = new Set<ProviderEntry>();
  let closed = false;

  function dispose(e: ProviderEntry): Promise<void> {
    retired.delete(e);
    const p = e.provider;
    e.provider = null;
    // Provider.shutdown only reports completion through its callback (it returns nothing).
    return p ? new Promise<void>((res) => { try { p.shutdown(() => res()); } catch { res(); } }) : Promise.resolve();
  }

  function entryFor(creds: AppCredentials): ProviderEntry {
    const cur = entries.get(creds.appId);
    if (cur && cur.version === creds.version) return cur;
    if (cur) {
      cur.retired = true;
      retired.add(cur);
      if (cur.inflight === 0) void dispose(cur);
    }
    const a = creds.apns;
    const e: ProviderEntry = { version: creds.version, provider: null, bundleId: a?.bundleId ?? "", broken: null, inflight: 0, retired: false };
    if (!a || !a.bundleId) {
      e.broken = fail("missing_credentials");
    } else {
      const options: ProviderOptions & Record<string, unknown> = {
        token: { key: a.keyP8, keyId: a.keyId, teamId: a.teamId },
        production: !!a.production,
        connectionRetryLimit: 0,
        requestTimeout: opts.requestTimeoutMs ?? 10_000,
      };
      if (opts.connectTo) {
        const to = opts.connectTo;
        // node-apn passes its options to http2.connect: Node's createConnection hook picks the socket.
        options.createConnection = (authority: URL) =>
          tls.connect({ host: to.host, port: to.port, servername: authority.hostname, ca: opts.ca, ALPNProtocols: ["h2"] }).setNoDelay(true);
      }
      const connections = Math.max(1, Math.floor(opts.connectionsPerApp ?? 1));
      try {
        e.provider = connections > 1 ? new MultiProvider({ ...options, clientCount: connections }) : new Provider(options);
      } catch {
        e.broken = fail("invalid_credentials"); // the .p8 does not parse or cannot sign ES256
      }
    }
    entries.set(creds.appId, e);
    return e;
  }

  async function sendOne(e: ProviderEntry, appSlot: Semaphore, token: string, item: SendItem): Promise<SendResult> {
    const note = buildApnsNotification(item.content, { bundleId: e.bundleId, ttlSeconds: ttl });
    // compile() (missing from the typings) is what node-apn sends; it caches the JSON for send().
    if (Buffer.byteLength((note as unknown as { compile(): string }).compile()) > APNS_MAX_PAYLOAD_BYTES) return fail("payload_too_large");
    await appSlot.acquire();
    await inFlight.acquire();
    try {
      if (!e.provider) return fail("transport_closed", { retryable: true });
      const res = await e.provider.send(note, token);
      if (res.sent.length === 1) return { ok: true };
      return classifyApnsFailure(res.failed[0] as ResponseFailure);
    } catch (err) {
      return classifyApnsFailure({ error: err });
    } finally {
      inFlight.release();
      appSlot.release();
    }
  }

  /** A send() holds its provider from start to end, so rotation never shuts one down under it. */
  function release(e: ProviderEntry): void {
    e.inflight--;
    if (e.inflight === 0) {
      if (e.retired) void dispose(e);
      e.onIdle?.();
    }
  }

  return {
    kind: "apns",
    async send(creds, items) {
      const unusable = unusableInput(creds, items);
      if (unusable) return unusable;
      if (closed) return items.map(() => fail("transport_closed", { retryable: true }));
      const e = entryFor(creds);
      const appSlot = perApp.get(creds.appId);
      e.inflight++;
      try {
        return await Promise.all(
          items.map((it) => {
            if (e.broken) return e.broken;
            const token = it?.recipient?.token;
            if (!isPlausibleApnsToken(token)) return fail("invalid_token", { tokenInvalid: true });
            if (!isValidContent(it.content)) return fail("invalid_content");
            return sendOne(e, appSlot, token, it);
          }),
        );
      } finally {
        release(e);
        perApp.prune();
      }
    },
    async close() {
      closed = true;
      const all = [...entries.values(), ...retired];
      entries.clear();
      await Promise.all(all.map((e) => (e.inflight === 0 ? dispose(e) : new Promise<void>((res) => (e.onIdle = () => void dispose(e).then(res))))));
    },
    /** node-apn Providers (one HTTP/2 connection each) currently held, retired ones included. */
    providerCount: () => [...entries.values(), ...retired].filter((e) => e.provider).length,
  };
}
