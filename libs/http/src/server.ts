import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import type { Logger } from "@pushstack/config";
import { httpBasics, json } from "./http";

/**
 * The HTTP shell every process serves: request ids, one error mapping, /healthz, OpenAPI at /docs
 * (JSON at /openapi.json), and whatever route sets the process runs (edge, core, or both).
 */
export function createServer(opts: { log: Logger; ready: () => Promise<string | null>; accessLog?: boolean; title?: string }) {
  return new Elysia()
    .use(httpBasics(opts.log, { accessLog: opts.accessLog }))
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        exclude: { paths: ["/healthz", "/docs", "/openapi.json"] },
        documentation: {
          info: {
            title: opts.title ?? "PushStack API",
            version: "3.0.0",
            description:
              "Push notifications for CPA traffic: devices, apps, push packs, postbacks, billing. Authenticate with `Authorization: Bearer <JWT or psk_live_ key>`. Every failure is `{\"error\": \"...\"}`.",
          },
          components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .get(
      "/healthz",
      async () => {
        const problem = await opts.ready().catch((e: Error) => e.message);
        return problem ? json(503, { error: problem }) : { status: "ok" };
      },
      { detail: { hide: true } },
    );
}
