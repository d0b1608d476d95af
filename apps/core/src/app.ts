import { Elysia } from "elysia";
import type { CoreContext } from "./context";
import { createTokenSigner, type TokenSigner } from "./modules/auth/tokens";
import { authRoutes } from "./modules/auth";
import { appRoutes } from "./modules/apps";
import { apiKeyRoutes } from "./modules/apikeys";
import { packRoutes } from "./modules/packs";
import { ensureAdmin } from "./modules/auth/service";
import { syncDirectory } from "./modules/directory/service";
import { deviceRoutes } from "./modules/devices";
import { activityRoutes } from "./modules/activity";
import { startIngest } from "./modules/ingest";
import { createJobRegistry, jobRoutes, type JobRegistry } from "./modules/jobs";
import { billingRoutes, billingAdminRoutes, registerBillingJobs } from "./modules/billing";
import { publishCredentials } from "./modules/directory/credentials";
import { createSending, analyticsRoutes } from "./modules/sending";
import { schedulerRoutes } from "./modules/schedulers";
import { pushRoutes } from "./modules/pushes";
import { eventRoutes } from "./modules/events";

export interface Core {
  /** Core's routes, to mount in a server (alone, or beside the edge in embedded mode). */
  routes: Elysia<any, any, any, any, any, any, any>;
  tokens: TokenSigner;
  /** Periodic jobs (scheduled in start(), run on demand by POST /api/v3/admin/jobs/:job). */
  jobs: JobRegistry;
  /** Start-up work that needs the database and the bus: admin bootstrap, directory resync, jobs. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createCore(ctx: CoreContext): Core {
  const tokens = createTokenSigner(ctx.config.jwtSecret, ctx.config.jwtExpiresIn);
  const jobs = createJobRegistry();
  registerBillingJobs(jobs);
  const sending = createSending(ctx);
  sending.register(jobs);
  let stopJobs = async () => {};
  const routes = new Elysia({ name: "core" })
    .use(authRoutes(ctx, tokens))
    .use(appRoutes(ctx, tokens))
    .use(apiKeyRoutes(ctx, tokens))
    .use(packRoutes(ctx, tokens))
    .use(billingRoutes(ctx, tokens))
    .use(billingAdminRoutes(ctx, tokens))
    .use(jobRoutes(ctx, tokens, jobs))
    .use(deviceRoutes(ctx, tokens))
    .use(activityRoutes(ctx, tokens))
    .use(analyticsRoutes(ctx, tokens))
    .use(schedulerRoutes(ctx, tokens))
    .use(pushRoutes(ctx, tokens))
    .use(eventRoutes(ctx, tokens));
  let ingest: { stop(): Promise<void> } | null = null;
  return {
    routes,
    tokens,
    jobs,
    async start() {
      if (ctx.config.adminEmail && ctx.config.adminPassword) await ensureAdmin(ctx, ctx.config.adminEmail, ctx.config.adminPassword);
      const n = await syncDirectory(ctx);
      ingest = await startIngest(ctx);
      await publishCredentials(ctx);
      await sending.start();
      stopJobs = jobs.start(ctx);
      ctx.log.info("core started", { apps_in_directory: n });
    },
    async stop() {
      await stopJobs();
      await sending.stop();
      await ingest?.stop();
      ingest = null;
    },
  };
}
