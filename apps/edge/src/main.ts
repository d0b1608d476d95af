import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { createServer } from "@pushstack/http";

/**
 * `bun run start:edge`: postbacks and the SDK API. Holds no database connection: it reads the app
 * directory from the bus and hands every accepted request to a JetStream stream.
 */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "edge" });
log.info("config", { config: redactConfig(config) });
if (!config.natsUrl) log.warn("NATS_URL is not set: a lone edge on the in-process bus reaches no core");
const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix, dataDir: config.dataDir });
const server = createServer({ log, title: "PushStack edge", ready: async () => (bus.isConnected() ? null : "bus not connected") }).listen(config.port);
log.info("listening", { port: server.server?.port });

const shutdown = async () => {
  await server.stop();
  await bus.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
