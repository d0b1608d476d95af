import { Elysia, type AnyElysia } from "elysia";
import type { Server } from "bun";
import type { Config, Logger } from "@pushstack/config";
import { BusError, decodeJson, type Bus } from "@pushstack/bus";
import { AppError } from "@pushstack/http";
import { IngestSubjects, type RegisterReply, type RegisterRequest } from "@pushstack/schema";
import { IngestBatcher, type BatcherOptions } from "./batcher";
import { clientIp, rateKey } from "./clientip";
import type { EdgeDeps } from "./deps";
import { AppDirectory, DirectoryUnavailable, type DirectoryOptions } from "./directory";
import { InstanceIds } from "./instance-id";
import { nativeGetPostback, postbackRoutes } from "./postback";
import { RateLimiter } from "./ratelimit";
import { sdkRoutes } from "./sdk";

export interface EdgeOptions {
  config: Config;
  log: Logger;
  /** The bus, read per call: in embedded mode it exists only once core has started. */
  bus: () => Bus;
  now?: () => Date;
  batcher?: Omit<BatcherOptions, "subject">;
  directory?: DirectoryOptions;
  /** Bound of each rate limiter's memory. Default 100,000 keys. */
  rateLimitKeys?: number;
  /** Seconds after which SDKs send their info again. Default 86,400. */
  infoRefreshSec?: number;
}

export interface Edge {
  /** The postback and SDK routes, to mount on a server (alone, or beside core in embedded mode). */
  routes: AnyElysia;
  /** GET /postback for Bun's native router (see serve.ts): same behaviour, without Elysia's hooks. */
  nativePostback(request: Request, server: Server<unknown>): Promise<Response>;
  /** Creates the ingest stream and loads the app directory (retrying in the background when the bus is down). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** null when ready to take traffic, else why not (for /healthz). */
  ready(): string | null;
  directory: AppDirectory;
  batcher: IngestBatcher;
}

const busDown = () => new AppError(503, "unavailable", "ingest temporarily unavailable, retry shortly", { "retry-after": "1" });

/**
 * The edge: takes postbacks and SDK traffic without a database. Apps come from the directory core
 * keeps in a KV bucket; accepted requests go to the ingest stream (answered 200 only once stored);
 * what needs the database (SDK registration) is a request to core over the bus.
 */
export function createEdge(opts: EdgeOptions): Edge {
  const { config, log, bus } = opts;
  const now = opts.now ?? (() => new Date());
  const trusted = new Set(config.trustedProxies.map((p) => p.trim().toLowerCase()));
  const postbackLimit = new RateLimiter(config.postbackRateLimit, { maxKeys: opts.rateLimitKeys });
  const sdkLimit = new RateLimiter(config.sdkRateLimit, { maxKeys: opts.rateLimitKeys });
  const directory = new AppDirectory(bus, log, opts.directory);
  const batcher = new IngestBatcher(bus, { subject: IngestSubjects.batch, ...opts.batcher });
  let streamReady = false;
  let stopped = false;
  let retry: Promise<void> | null = null;

  const ipOf = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null) =>
    clientIp(server?.requestIP(request)?.address, trusted.size ? request.headers.get("x-forwarded-for") : null, trusted);

  // a failure seen by thousands of requests a second is logged once a second, not once a request
  let lastWarn = 0;
  const warnSometimes = (msg: string, err: unknown) => {
    const t = Date.now();
    if (t - lastWarn < 1000) return;
    lastWarn = t;
    log.warn(msg, { err: (err as Error)?.message ?? String(err) });
  };

  const limited = (limiter: RateLimiter, key: string, what: string) => {
    const wait = limiter.take(key);
    if (wait > 0) {
      throw new AppError(429, "rate_limited", `rate limit exceeded: at most ${limiter.limit} requests per second ${what}`, {
        "retry-after": String(RateLimiter.retryAfterSec(wait)),
      });
    }
  };

  const deps: EdgeDeps = {
    config,
    log,
    now,
    ids: new InstanceIds(config.masterKey),
    infoRefreshSec: opts.infoRefreshSec ?? 86_400,
    knownApp: (appId) => directory.known(appId),
    async findApp(appId) {
      try {
        return directory.known(appId) ?? (await directory.find(appId));
      } catch (err) {
        if (err instanceof DirectoryUnavailable) throw busDown();
        throw err;
      }
    },
    ingest(item) {
      // no connection: say so at once rather than queue what cannot be stored
      if (!bus().isConnected()) return Promise.reject(busDown());
      return batcher.add(item).catch((err) => {
        warnSometimes("ingest publish failed", err);
        throw busDown();
      });
    },
    limitPostback(request, server) {
      const ip = ipOf(request, server);
      limited(postbackLimit, rateKey(ip), "per client address");
      return ip;
    },
    limitSdk(appIdRaw) {
      limited(sdkLimit, appIdRaw.slice(0, 32), "per app_id");
    },
    async register(req: RegisterRequest) {
      let raw: Uint8Array;
      try {
        raw = await bus().request(IngestSubjects.register, JSON.stringify(req), { timeoutMs: 5000 });
      } catch (err) {
        if (err instanceof BusError) {
          warnSometimes("registration request failed", err);
          throw busDown();
        }
        throw err;
      }
      return decodeJson<RegisterReply>(raw);
    },
    proxyCountry(request, server) {
      const peer = server?.requestIP(request)?.address;
      if (!peer || !trusted.has(peer.replace(/^::ffff:/, ""))) return null;
      const c = request.headers.get("cf-ipcountry") ?? request.headers.get("x-country-code");
      return c && /^[A-Za-z]{2}$/.test(c) && c.toUpperCase() !== "XX" ? c.toUpperCase() : null;
    },
  };

  const routes = new Elysia({ name: "edge" })
    .use(postbackRoutes(deps))
    .use(sdkRoutes(deps, "/api/v3/apps"))
    .use(sdkRoutes(deps, "/api/b/v2/apps", true));

  const ensureStream = async () => {
    await bus().ensureStream({ name: IngestSubjects.stream, subjects: [...IngestSubjects.streamSubjects], retention: "workqueue" });
    streamReady = true;
  };
  // the bus may be down at start: keep trying in the background until the stream exists
  const keepTrying = () =>
    (retry ??= (async () => {
      while (!stopped && !streamReady) {
        try {
          await ensureStream();
        } catch (err) {
          log.warn("ingest stream not ready; retrying", { err: (err as Error).message });
          await Bun.sleep(1000);
        }
      }
    })());

  return {
    routes,
    nativePostback: nativeGetPostback(deps),
    directory,
    batcher,
    async start() {
      await Promise.race([keepTrying(), Bun.sleep(5000)]);
      await directory.start();
    },
    async stop() {
      stopped = true;
      postbackLimit.stop();
      sdkLimit.stop();
      await directory.stop();
    },
    ready() {
      if (!bus().isConnected()) return "bus not connected";
      if (!streamReady) return "ingest stream not ready";
      if (!directory.ready) return "app directory not loaded";
      return null;
    },
  };
}
