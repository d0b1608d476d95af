import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { openDatabase, ping } from "./db";
import { createCore } from "./app";
import { createServer } from "@pushstack/http";
import type { CoreContext } from "./context";

/** `bun run start:core`: the management API, jobs and consumers; the only owner of PostgreSQL. */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "core" });
log.info("config", { config: redactConfig(config) });
const database = await openDatabase(config);
const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix, dataDir: config.dataDir });
const ctx: CoreContext = { config, db: database.db, bus, log, now: () => new Date() };
const core = createCore(ctx);
await core.start();
const server = createServer({
  log,
  accessLog: true,
  ready: async () => {
    if (!bus.isConnected()) return "bus not connected";
    await ping(database.db);
    return null;
  },
})
  .use(core.routes)
  .listen(config.port);
log.info("listening", { port: server.server?.port });

const shutdown = async () => {
  log.info("shutting down");
  await server.stop();
  await core.stop();
  await bus.close();
  await database.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
