import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import type { Logger } from "@pushstack/config";
import { httpBasics, json } from "./http";

/**
 * The HTTP shell every process serves: request ids, one error mapping, /healthz, OpenAPI at /docs
 * (JSON at /openapi.json), and whatever route sets the process runs (edge, core, or both).
 */
export function createServer(opts: {
  log: Logger;
  /** null when ready, else why not (answered by /healthz with 503). */
  ready: () => Promise<string | null>;
  /** While false, every route but /healthz answers 503: the process listens before it has migrated. */
  started?: () => boolean;
  accessLog?: boolean;
  title?: string;
}) {
  return new Elysia()
    .use(httpBasics(opts.log, { accessLog: opts.accessLog }))
    .onRequest(({ request }) => {
      if (opts.started && !opts.started() && !request.url.endsWith("/healthz")) {
        return json(503, { error: "starting, retry shortly" }, { "retry-after": "1" });
      }
    })
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
        if (opts.started && !opts.started()) return json(503, { error: "starting" });
        const problem = await opts.ready().catch((e: Error) => e.message);
        return problem ? json(503, { error: problem }) : { status: "ok" };
      },
      { detail: { hide: true } },
    );
}
