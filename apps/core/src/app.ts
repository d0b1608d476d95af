import { Elysia } from "elysia";
import type { CoreContext } from "./context";
import { createTokenSigner, type TokenSigner } from "./modules/auth/tokens";
import { authRoutes } from "./modules/auth";
import { appRoutes } from "./modules/apps";
import { apiKeyRoutes } from "./modules/apikeys";
import { packRoutes } from "./modules/packs";
import { ensureAdmin } from "./modules/auth/service";
import { syncDirectory } from "./modules/directory/service";
import { publishCredentials } from "./modules/directory/credentials";

export interface Core {
  /** Core's routes, to mount in a server (alone, or beside the edge in embedded mode). */
  routes: Elysia<any, any, any, any, any, any, any>;
  tokens: TokenSigner;
  /** Start-up work that needs the database and the bus: admin bootstrap, directory resync, jobs. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createCore(ctx: CoreContext): Core {
  const tokens = createTokenSigner(ctx.config.jwtSecret, ctx.config.jwtExpiresIn);
  const routes = new Elysia({ name: "core" })
    .use(authRoutes(ctx, tokens))
    .use(appRoutes(ctx, tokens))
    .use(apiKeyRoutes(ctx, tokens))
    .use(packRoutes(ctx, tokens));
  return {
    routes,
    tokens,
    async start() {
      if (ctx.config.adminEmail && ctx.config.adminPassword) await ensureAdmin(ctx, ctx.config.adminEmail, ctx.config.adminPassword);
      const n = await syncDirectory(ctx);
      await publishCredentials(ctx);
      ctx.log.info("core started", { apps_in_directory: n });
    },
    async stop() {},
  };
}
