import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import tls from "node:tls";
import { peerTls, startH2Server, type H2Server } from "@pushstack/testing";
import { installProviderSessionHook, withFcmRoute } from "./h2-connect";

let server: H2Server;
const authorities: string[] = [];

beforeAll(async () => {
  const { key, cert } = peerTls();
  server = await startH2Server({
    key, cert,
    handler: (req) => {
      authorities.push(req.authority);
      return req.path === "/hang" ? null : { status: 200, body: "ok" };
    },
  });
  installProviderSessionHook();
});
afterAll(() => server.close());

const call = (s: http2.ClientHttp2Session, path: string, timeoutMs?: number) =>
  new Promise<string>((resolve) => {
    const req = s.request({ ":method": "POST", ":path": path });
    if (timeoutMs) req.setTimeout(timeoutMs, () => {
      req.close(http2.constants.NGHTTP2_CANCEL);
      resolve("timeout");
    });
    req.on("response", (h) => resolve(String(h[":status"])));
    req.on("error", () => resolve("error"));
    req.end("x");
  });

describe("provider session hook", () => {
  test("an FCM session opened under a route reaches the route, with fcm.googleapis.com as authority", async () => {
    const s = withFcmRoute({ host: "127.0.0.1", port: server.port, ca: peerTls().cert }, () => http2.connect("https://fcm.googleapis.com"));
    expect(await call(s, "/v1/x")).toBe("200");
    expect(authorities.at(-1)).toMatch(/^fcm\.googleapis\.com(:443)?$/);
    s.close();
  });

  test("per-request timeouts add no session listeners (Bun leak) and still fire", async () => {
    const s = http2.connect("https://api.push.apple.com", {
      createConnection: () => tls.connect({ host: "127.0.0.1", port: server.port, servername: "api.push.apple.com", ca: peerTls().cert, ALPNProtocols: ["h2"] }),
    } as http2.SecureClientSessionOptions);
    const results = await Promise.all(Array.from({ length: 300 }, () => call(s, "/ok", 5000)));
    expect(results.every((r) => r === "200")).toBe(true);
    expect(s.listenerCount("timeout")).toBe(0);
    expect(await call(s, "/hang", 150)).toBe("timeout");
    s.close();
  });

  test("other origins are left alone", async () => {
    const s = http2.connect(`https://localhost:${server.port}`, { ca: peerTls().cert } as http2.SecureClientSessionOptions);
    expect(await call(s, "/plain")).toBe("200");
    expect(authorities.at(-1)).toBe(`localhost:${server.port}`);
    s.close();
  });
});
