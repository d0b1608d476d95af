import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { createBus } from "@pushstack/bus";
import { createServer } from "@pushstack/http";
import { startDispatcher } from "./runtime";

/** `bun run start:dispatcher`: consumes send jobs and delivers over FCM, APNs and Web Push. No database. */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "dispatcher" });
log.info("config", { config: redactConfig(config) });
if (!config.natsUrl) log.warn("NATS_URL is not set: a lone dispatcher on the in-process bus receives no jobs");
const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix, dataDir: config.dataDir });
let started = false;
// health endpoint for orchestrators; the dispatcher has no public API
const server = createServer({
  log,
  title: "PushStack dispatcher",
  started: () => started,
  ready: async () => (bus.isConnected() ? null : "bus not connected"),
}).listen(config.port);
log.info("listening", { port: server.server?.port });
const stopDispatcher = await startDispatcher({ config, log, bus });
started = true;

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
  await stopDispatcher();
  await bus.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
