import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { createServer } from "@pushstack/http";
import { createCore, openDatabase, ping, type CoreContext } from "@pushstack/core";

/**
 * `bun run start`: edge, core and dispatcher in one process on one port. With no configuration this
 * is the embedded mode (PGlite in DATA_DIR, in-process bus journaled in DATA_DIR); DATABASE_URL and
 * NATS_URL switch the same process to PostgreSQL and NATS JetStream.
 */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "pushstack" });
log.info("config", { config: redactConfig(config), mode: config.databaseUrl || config.natsUrl ? "external services" : "embedded" });
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
log.info("listening", { port: server.server?.port, docs: `http://localhost:${server.server?.port}/docs` });

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  log.info("shutting down");
  await server.stop();
  await core.stop();
  await bus.close();
  await database.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
