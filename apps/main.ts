import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { startCoreRuntime, exitOnSignal } from "@pushstack/core";
import { createEdge, type Edge } from "@pushstack/edge";
import { startDispatcher } from "@pushstack/dispatcher";

/**
 * `bun run start`: edge, core and dispatcher in one process on one port. With no configuration this
 * is the embedded mode (PGlite in DATA_DIR, in-process bus journaled in DATA_DIR); DATABASE_URL and
 * NATS_URL switch the same process to PostgreSQL and NATS JetStream.
 */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "pushstack" });
log.info("config", { config: redactConfig(config), mode: config.databaseUrl || config.natsUrl ? "external services" : "embedded" });
let edge: Edge | null = null;
const runtime = await startCoreRuntime({
  config,
  log,
  // the edge's postback and SDK routes on the same server, over the same (in-process or NATS) bus
  extraRoutes: (bus) => [(edge = createEdge({ config, log: log.child({ part: "edge" }), bus })).routes],
  afterStart: async (bus) => {
    await edge!.start();
    // the dispatcher consumes send jobs from the same bus
    const stopDispatcher = await startDispatcher({ config, log: log.child({ part: "dispatcher" }), bus });
    return async () => {
      await edge!.stop();
      await stopDispatcher();
    };
  },
});
exitOnSignal(log, runtime.stop);
