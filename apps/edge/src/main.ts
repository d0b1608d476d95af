import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { createEdge } from "./edge";
import { serveEdge } from "./serve";

/**
 * `bun run start:edge`: postbacks and the SDK API. Holds no database connection: it reads the app
 * directory from the bus and hands every accepted request to a JetStream stream. It listens at once;
 * /healthz answers 503 until the bus is connected, the stream exists and the directory is loaded.
 */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "edge" });
log.info("config", { config: redactConfig(config) });
if (!config.natsUrl) log.warn("NATS_URL is not set: a lone edge on the in-process bus reaches no core");
const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix, dataDir: config.dataDir, name: "pushstack-edge" });
const edge = createEdge({ config, log, bus: () => bus });
const server = serveEdge(edge, { log, port: config.port });
log.info("listening", { port: server.server?.port });
await edge.start();
log.info("ready", { apps: edge.directory.size, problem: edge.ready() });

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  log.info("shutting down");
  // stop taking requests; those in flight finish (their publishes are acked or fail) before the bus closes
  await server.stop();
  await edge.stop();
  await bus.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
