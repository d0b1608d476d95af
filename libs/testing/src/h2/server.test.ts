import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import tls from "node:tls";
import { peerTls } from "../tls";
import { startH2Server, type H2Request, type H2Server } from "./server";

/** The peers' HTTP/2 server against the runtime's own HTTP/2 client (node:http2). */

let server: H2Server;
const seen: H2Request[] = [];

beforeAll(async () => {
  const { key, cert } = peerTls();
  server = await startH2Server({
    key, cert, maxConcurrentStreams: 5, maxBodyBytes: 1 << 20,
    handler: (req) => {
      seen.push(req);
      if (req.path === "/big") return { status: 200, body: Buffer.alloc(300_000, 7) };
      return { status: 201, headers: { "x-echo-len": String(req.body.length) }, body: JSON.stringify({ path: req.path, scheme: req.scheme }) };
    },
  });
});
afterAll(() => server.close());

function connect() {
  return http2.connect("https://localhost", {
    createConnection: () => tls.connect({ host: "127.0.0.1", port: server.port, servername: "localhost", ca: peerTls().cert, ALPNProtocols: ["h2"] }),
  } as http2.SecureClientSessionOptions);
}

function request(s: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer | string) {
  return new Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: Buffer; error?: string }>((resolve) => {
    const req = s.request({ ":method": "POST", ...headers });
    const chunks: Buffer[] = [];
    let h: http2.IncomingHttpHeaders = {};
    req.on("response", (x) => (h = x));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve({ status: Number(h[":status"]), headers: h, body: Buffer.concat(chunks) }));
    req.on("error", (e) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: e.message }));
    req.end(body);
  });
}

describe("startH2Server", () => {
  test("answers a request; accepts firebase-admin's `:scheme: https:` that nghttp2 would reset", async () => {
    const s = connect();
    const a = await request(s, { ":path": "/a", "content-type": "application/json" }, "{}");
    const b = await request(s, { ":path": "/b", ":scheme": "https:" }, "x");
    expect(a).toMatchObject({ status: 201, headers: { "x-echo-len": "2" } });
    expect(JSON.parse(b.body.toString())).toEqual({ path: "/b", scheme: "https:" });
    expect(seen.find((r) => r.path === "/a")).toMatchObject({ method: "POST", authority: "localhost:443", scheme: "https" });
    s.close();
  });

  test("flow control both ways: a 200 kB request body and a 300 kB response", async () => {
    const s = connect();
    const up = await request(s, { ":path": "/up" }, Buffer.alloc(200_000, 1));
    expect(up.headers["x-echo-len"]).toBe("200000");
    const down = await request(s, { ":path": "/big" });
    expect(down.body.length).toBe(300_000);
    expect(down.body.every((b) => b === 7)).toBe(true);
    s.close();
  });

  test("many concurrent streams on one connection all complete (the client queues at the advertised limit)", async () => {
    const s = connect();
    await request(s, { ":path": "/warm" }); // SETTINGS exchanged and acknowledged
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => request(s, { ":path": `/c${i}` }, "z")));
    expect(all.every((r) => r.status === 201)).toBe(true);
    s.close();
  });
});
