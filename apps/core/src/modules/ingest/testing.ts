import { createBus, type Bus } from "@pushstack/bus";
import { silentLogger } from "@pushstack/config";
import { createServer } from "@pushstack/http";
import { createEdge, serveEdge, type Edge, type EdgeOptions } from "@pushstack/edge";
import { IngestSubjects } from "@pushstack/schema";
import { readResponse, startTestCore, type TestCore } from "../../testing/harness";

export interface TestStack {
  t: TestCore;
  edge: Edge;
  /** The edge's own bus: a second NATS connection when NATS_URL is set, else core's in-process bus. */
  edgeBus: Bus;
  base: string;
  /** Raw fetch against the edge's real HTTP server (client address from the socket). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** JSON call to the edge: status, parsed body, headers. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  /** Resolves when core has processed everything the edge stored. */
  settle(timeoutMs?: number): Promise<void>;
  /** An account with one app; returns the app object and the owner's token. */
  app(opts?: { plan?: string; platform?: string }): Promise<{ token: string; userId: number; app: any }>;
  close(): Promise<void>;
}

/**
 * Core (real routes, own database, own bus prefix) and an edge on a real listening server beside it,
 * talking over the bus as in production: the edge has no database handle.
 */
export async function startTestStack(
  env: Record<string, string> = {},
  edgeOpts: Partial<EdgeOptions> = {},
  /** "native": as `bun run start:edge` serves (GET /postback on Bun's router); "elysia": as embedded mode. */
  serving: "native" | "elysia" = "native",
): Promise<TestStack> {
  const t = await startTestCore(env);
  const edgeBus = t.bus.kind === "nats" ? await createBus({ natsUrl: t.ctx.config.natsUrl, prefix: t.ctx.config.busPrefix }) : t.bus;
  const edge = createEdge({ config: t.ctx.config, log: silentLogger, bus: () => edgeBus, ...edgeOpts });
  await edge.start();
  const server =
    serving === "native"
      ? serveEdge(edge, { log: silentLogger, port: 0, hostname: "127.0.0.1" })
      : createServer({ log: silentLogger, ready: async () => edge.ready() }).use(edge.routes).listen({ port: 0, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${server.server!.port}`;
  const s: TestStack = {
    t,
    edge,
    edgeBus,
    base,
    fetch: (path, init) => fetch(base + path, init),
    async call(method, path, body, headers = {}) {
      const res = await fetch(base + path, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return readResponse(res);
    },
    async settle(timeoutMs = 20_000) {
      const info = (t.bus as unknown as { streamInfo(n: string): Promise<{ messages: number }> }).streamInfo.bind(t.bus);
      const end = Date.now() + timeoutMs;
      for (;;) {
        if (edge.batcher.pending === 0 && (await info(IngestSubjects.stream)).messages === 0) return;
        if (Date.now() > end) throw new Error("ingest did not settle");
        await Bun.sleep(20);
      }
    },
    async app(opts = {}) {
      const u = await t.user({ plan: opts.plan });
      const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "App", platform: opts.platform ?? "android" } });
      if (r.status !== 201) throw new Error(`app create failed: ${r.status} ${JSON.stringify(r.body)}`);
      // the edge learns new apps through the directory watch; wait until it has this one
      const end = Date.now() + 5000;
      while (!edge.directory.known(r.body.id) && Date.now() < end) await Bun.sleep(5);
      return { token: u.token, userId: u.id, app: r.body };
    },
    async close() {
      await server.stop(true);
      await edge.stop();
      if (edgeBus !== t.bus) await edgeBus.close();
      await t.close();
    },
  };
  return s;
}
