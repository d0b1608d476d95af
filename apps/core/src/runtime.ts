import type { AnyElysia } from "elysia";
import type { Config, Logger } from "@pushstack/config";
import { createBus, type Bus } from "@pushstack/bus";
import { createServer } from "@pushstack/http";
import { openDatabase, ping, type Database } from "./db";
import { createCore } from "./app";
import type { CoreContext } from "./context";

export interface CoreRuntime {
  ctx: CoreContext;
  bus: Bus;
  port: number;
  stop(): Promise<void>;
}

/**
 * A core process: the port opens first, so /healthz answers 503 while the database migrates; then the
 * database and the bus come up, core starts, and requests are let through. `extraRoutes` are mounted
 * on the same server (the edge's, in embedded mode); `afterStart` starts what shares the bus (the dispatcher).
 */
export async function startCoreRuntime(opts: {
  config: Config;
  log: Logger;
  extraRoutes?: (bus: () => Bus) => AnyElysia[];
  afterStart?: (bus: Bus) => Promise<() => Promise<void>>;
}): Promise<CoreRuntime> {
  const { config, log } = opts;
  let database: Database | null = null;
  let bus: Bus | null = null;
  let started = false;
  // services read ctx.db / ctx.bus per call; both are set before `started` lets requests through
  const ctx = { config, log, now: () => new Date() } as CoreContext;
  const core = createCore(ctx);
  let server = createServer({
    log,
    accessLog: true,
    started: () => started,
    ready: async () => {
      if (!bus?.isConnected()) return "bus not connected";
      await ping(database!.db);
      return null;
    },
  }).use(core.routes);
  for (const r of opts.extraRoutes?.(() => bus!) ?? []) server = server.use(r);
  server.listen(config.port);
  const port = server.server!.port!;
  log.info("listening", { port, docs: `http://localhost:${port}/docs` });

  database = await openDatabase(config);
  bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix, dataDir: config.dataDir });
  ctx.db = database.db;
  ctx.bus = bus;
  await core.start();
  const stopAfter = (await opts.afterStart?.(bus)) ?? (async () => {});
  started = true;
  log.info("ready");

  return {
    ctx,
    bus,
    port,
    async stop() {
      await server.stop();
      await stopAfter();
      await core.stop();
      await bus!.close();
      await database!.close();
    },
  };
}

/** SIGTERM/SIGINT: stop taking requests, finish in-flight work, close connections, exit. */
export function exitOnSignal(log: Logger, stop: () => Promise<void>) {
  let stopping = false;
  const handler = async () => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down");
    await stop().catch((err) => log.error("shutdown failed", { err }));
    process.exit(0);
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}
