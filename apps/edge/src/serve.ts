import { createServer } from "@pushstack/http";
import type { Logger } from "@pushstack/config";
import type { Edge } from "./edge";

/**
 * The standalone edge's HTTP server: the HTTP shell (request ids, error shape, /healthz, OpenAPI at
 * /docs) with the edge's routes, listening. GET /postback, the route CPA networks hammer, is also given
 * to Bun's own router, which calls the native handler directly (the shell's per-request hooks cost about
 * a quarter of the CPU a postback takes); Elysia keeps serving and documenting everything else.
 * Elysia merges `config.serve.routes` over its own, so the native handler wins for that method and path.
 */
export function serveEdge(edge: Edge, opts: { log: Logger; port: number; hostname?: string }) {
  const app = createServer({ log: opts.log, title: "PushStack edge", ready: async () => edge.ready() }).use(edge.routes);
  app.config.serve = { ...app.config.serve, routes: { "/postback": { GET: edge.nativePostback } } } as typeof app.config.serve;
  app.listen({ port: opts.port, hostname: opts.hostname });
  return app;
}
