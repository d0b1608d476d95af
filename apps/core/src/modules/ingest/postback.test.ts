import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { activityLog, apps, devices, deviceEvents } from "@pushstack/schema";
import { startTestStack, type TestStack } from "./testing";

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(() => s.close());

const get = (qs: string) => s.call("GET", `/postback?${qs}`);
const devicesOf = (appId: number) => s.t.ctx.db.select().from(devices).where(eq(devices.appId, appId));
const logOf = (appId: number) => s.t.ctx.db.select().from(activityLog).where(eq(activityLog.appId, appId));

describe("postback errors and their precedence", () => {
  test("400 app_id is required: absent or empty, GET and POST", async () => {
    for (const r of [await get(""), await get("app_id=&external_id=x"), await s.call("POST", "/postback", { external_id: "x" })]) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: "app_id is required" });
    }
  });

  test("400 app_id must be a positive integer", async () => {
    for (const v of ["abc", "0", "-1", "1.5", "1e3", "0x10", "12abc", "000"]) {
      const r = await get(`app_id=${encodeURIComponent(v)}`);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: "app_id must be a positive integer" });
    }
    for (const v of [true, 12.5, -3, 0, { id: 1 }, "1 2"]) {
      const r = await s.call("POST", "/postback", { app_id: v });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: "app_id must be a positive integer" });
    }
  });

  test("404 app not found, for unknown and out-of-range ids", async () => {
    for (const v of ["999999", "99999999999", "0042000000"]) {
      const r = await get(`app_id=${v}&external_id=x`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: "app not found" });
    }
  });

  test("401 invalid postback token; the right token or none is accepted; an empty one counts as none", async () => {
    const { app } = await s.app();
    const bad = await get(`app_id=${app.id}&token=nope&external_id=t1`);
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: "invalid postback token" });
    expect((await get(`app_id=${app.id}&token=${app.postback_token}&external_id=t1`)).status).toBe(200);
    expect((await get(`app_id=${app.id}&external_id=t1`)).status).toBe(200);
    expect((await get(`app_id=${app.id}&token=&external_id=t1`)).status).toBe(200);
  });

  test("403 app is archived", async () => {
    const { app, token } = await s.app();
    await s.t.req("PATCH", `/api/v3/apps/${app.id}`, { token, body: { archived: true } });
    await waitFor(() => s.edge.directory.known(app.id)?.archived === true);
    const r = await get(`app_id=${app.id}&external_id=a1`);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: "app is archived" });
  });

  test("precedence: app_id present, positive integer, app exists, token, archived", async () => {
    const { app, token } = await s.app();
    await s.t.req("PATCH", `/api/v3/apps/${app.id}`, { token, body: { archived: true } });
    await waitFor(() => s.edge.directory.known(app.id)?.archived === true);
    // archived and wrong token: the token answers
    expect((await get(`app_id=${app.id}&token=wrong&external_id=x`)).body).toEqual({ error: "invalid postback token" });
    // unknown app and wrong token: not found
    expect((await get(`app_id=987654&token=wrong`)).body).toEqual({ error: "app not found" });
    // bad app_id with everything else wrong too
    expect((await get(`app_id=x&token=wrong&event=${"e".repeat(100)}`)).body).toEqual({ error: "app_id must be a positive integer" });
    // archived with no identifier: still 403 (the app checks come before "nothing to record")
    expect((await get(`app_id=${app.id}`)).status).toBe(403);
  });

  test("field limits come after the app checks and name the field", async () => {
    const { app } = await s.app();
    const long = await get(`app_id=${app.id}&gaid=${"g".repeat(256)}`);
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ error: "gaid must be at most 255 characters" });
    const ev = await get(`app_id=${app.id}&external_id=x&event=${encodeURIComponent("no spaces")}`);
    expect(ev.body).toEqual({ error: "event must be 1 to 64 characters of letters, digits, _ . : -" });
    const tag = await get(`app_id=${app.id}&external_id=x&offer=${"o".repeat(256)}`);
    expect(tag.body).toEqual({ error: "offer must be at most 255 characters" });
    const malformed = await s.fetch("/postback", { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: "malformed request body" });
    const obj = await s.call("POST", "/postback", { app_id: app.id, external_id: { a: 1 } });
    expect(obj.body).toEqual({ error: "external_id must be a string" });
  });
});

test("GET /postback answers alike on Bun's native route (start:edge) and through Elysia (embedded)", async () => {
  const elysia = await startTestStack({}, {}, "elysia");
  try {
    const { app } = await s.app();
    const other = await elysia.app();
    const cases = (id: number, token: string) => [
      "", "app_id=", "app_id=x", "app_id=0", "app_id=99999999", `app_id=${id}&token=bad`, `app_id=${id}`,
      `app_id=${id}&token=${token}&external_id=a&event=reg`, `app_id=${id}&gaid=${"g".repeat(256)}`, `app_id=${id}&external_id=a&event=a%20b`,
    ];
    const a = await Promise.all(cases(app.id, app.postback_token).map((q) => s.call("GET", `/postback?${q}`, undefined, { "x-request-id": "rid-1" })));
    const b = await Promise.all(cases(other.app.id, other.app.postback_token).map((q) => elysia.call("GET", `/postback?${q}`, undefined, { "x-request-id": "rid-1" })));
    expect(a.map((r) => [r.status, r.body])).toEqual(b.map((r) => [r.status, r.body]));
    for (const r of [...a, ...b]) {
      expect(r.headers.get("x-request-id")).toBe("rid-1");
      expect(r.headers.get("content-type")).toStartWith("application/json");
    }
  } finally {
    await elysia.close();
  }
});

describe("postback rules", () => {
  test("no identifier: {status: ok} and nothing recorded", async () => {
    const { app } = await s.app();
    const r = await get(`app_id=${app.id}&event=dep&segment=s&external_id=&install_id=`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok" });
    await s.settle();
    expect(await devicesOf(app.id)).toEqual([]);
    expect(await logOf(app.id)).toEqual([]);
  });

  test("identifier: first non-empty of external_id, install_id, gaid, idfa", async () => {
    const { app } = await s.app();
    await get(`app_id=${app.id}&idfa=I&gaid=G&install_id=N&external_id=E`);
    await get(`app_id=${app.id}&idfa=I&gaid=G&install_id=N&external_id=`);
    await get(`app_id=${app.id}&idfa=I&gaid=G`);
    await get(`app_id=${app.id}&idfa=I`);
    await s.settle();
    const ds = await devicesOf(app.id);
    expect(ds.map((d) => d.externalId).sort()).toEqual(["E", "G", "I", "N"]);
    // postback-created devices are server-side ones: install_token srv_<external_id>
    expect(ds.map((d) => d.installToken).sort()).toEqual(["srv_E", "srv_G", "srv_I", "srv_N"]);
  });

  test("a valid postback finds or creates the device, stores tags, records the event, logs it", async () => {
    const { app, token } = await s.app();
    expect((await get(`app_id=${app.id}&external_id=u1&event=reg&segment=vip&webmaster=w7&offer=o9&click_id=abc&token=${app.postback_token}`)).body).toEqual({ status: "ok" });
    expect((await get(`app_id=${app.id}&external_id=u1&event=install&segment=regular`)).status).toBe(200);
    await s.settle();
    const [d, ...more] = await devicesOf(app.id);
    expect(more).toEqual([]);
    expect(d!.tags).toEqual({ segment: "regular", webmaster: "w7", offer: "o9" });
    expect(d!.events).toEqual(["reg", "install"]);
    expect(d!.source).toBe("postback");
    const log = await s.t.req("GET", `/api/v3/apps/${app.id}/activity`, { token });
    expect(log.status).toBe(200);
    expect(log.body.items).toHaveLength(2);
    const first = log.body.items[1];
    expect(first.kind).toBe("postback");
    expect(first.method).toBe("GET");
    expect(first.external_id).toBe("u1");
    expect(first.event).toBe("reg");
    expect(first.outcome).toBe("recorded");
    expect(first.ip).toBe("127.0.0.1");
    expect(first.params).toEqual({ external_id: "u1", segment: "vip", webmaster: "w7", offer: "o9", click_id: "abc" });
    expect(first.devices).toEqual([{ device_id: d!.id, event: "reg", created: true }]);
    expect(log.body.items[0].devices).toEqual([{ device_id: d!.id, event: "install", created: false }]);
    // the token is never logged
    expect(JSON.stringify(log.body)).not.toContain(app.postback_token);
  });

  test("deposit auto-numbering: dep, dep2, dep3 ... per device", async () => {
    const { app } = await s.app();
    for (let i = 0; i < 4; i++) expect((await get(`app_id=${app.id}&external_id=d1&event=dep`)).status).toBe(200);
    await get(`app_id=${app.id}&external_id=d2&event=dep`);
    await s.settle();
    const ds = await devicesOf(app.id);
    const d1 = ds.find((d) => d.externalId === "d1")!;
    const d2 = ds.find((d) => d.externalId === "d2")!;
    expect(d1.events).toEqual(["dep", "dep2", "dep3", "dep4"]);
    expect(d1.deposits).toBe(4);
    expect(d2.events).toEqual(["dep"]);
    const codes = (await s.t.ctx.db.select().from(deviceEvents).where(eq(deviceEvents.deviceId, d1.id))).map((e) => e.code);
    expect(codes.sort()).toEqual(["dep", "dep2", "dep3", "dep4"]);
  });

  test("event omitted: device and tags, no event", async () => {
    const { app } = await s.app();
    await get(`app_id=${app.id}&external_id=n1&segment=s1`);
    await s.settle();
    const [d] = await devicesOf(app.id);
    expect(d!.events).toEqual([]);
    expect(d!.tags).toEqual({ segment: "s1" });
  });

  test("POST: JSON (numbers as text), form, multipart; the query string fills in", async () => {
    const { app } = await s.app();
    expect((await s.call("POST", "/postback", { app_id: app.id, external_id: 12345, event: "reg" })).body).toEqual({ status: "ok" });
    const form = await s.fetch("/postback", { method: "POST", body: new URLSearchParams({ app_id: String(app.id), gaid: "form-user", event: "dep" }) });
    expect(form.status).toBe(200);
    const fd = new FormData();
    fd.set("app_id", String(app.id));
    fd.set("idfa", "multi-user");
    expect((await s.fetch("/postback", { method: "POST", body: fd })).status).toBe(200);
    const mixed = await s.fetch(`/postback?app_id=${app.id}`, { method: "POST", body: new URLSearchParams({ external_id: "mixed" }) });
    expect(mixed.status).toBe(200);
    const text = await s.fetch("/postback", { method: "POST", headers: { "content-type": "text/plain" }, body: `app_id=${app.id}&external_id=plain` });
    expect(text.status).toBe(200);
    await s.settle();
    expect((await devicesOf(app.id)).map((d) => d.externalId).sort()).toEqual(["12345", "form-user", "mixed", "multi-user", "plain"]);
    const log = await logOf(app.id);
    expect(log.every((l) => l.method === "POST")).toBe(true);
  });

  test("a postback reaches the SDK device registered with that ext_id", async () => {
    const { app } = await s.app();
    const reg = await s.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: "sdk-token-1", ext_id: "player-9" });
    expect(reg.status).toBe(200);
    await get(`app_id=${app.id}&external_id=player-9&event=dep&segment=whale`);
    await s.settle();
    const ds = await devicesOf(app.id);
    expect(ds).toHaveLength(1);
    expect(ds[0]!.installToken).toBe("sdk-token-1");
    expect(ds[0]!.events).toEqual(["dep"]);
    expect(ds[0]!.tags).toEqual({ segment: "whale" });
  });

  test("an app not yet in the edge's directory is confirmed with core", async () => {
    const { userId } = await s.app();
    // an app core has but never published (as if the directory update were still on its way)
    const [row] = await s.t.ctx.db
      .insert(apps)
      .values({ userId, name: "fresh", platform: "web", postbackToken: "tok", vapidPublicKey: "k", vapidPrivateKeyEnc: "x" })
      .returning();
    expect(s.edge.directory.known(row!.id)).toBeUndefined();
    expect((await get(`app_id=${row!.id}&external_id=f1&event=reg`)).status).toBe(200);
    await s.settle();
    expect((await devicesOf(row!.id)).map((d) => d.events)).toEqual([["reg"]]);
    // an id core does not have either stays 404 (and is cached as such)
    expect((await get(`app_id=${row!.id + 1000}&external_id=f1`)).status).toBe(404);
  });

  test("the rate limit is per client IP: 429 with Retry-After past it", async () => {
    const limited = await startTestStack({ POSTBACK_RATE_LIMIT: "5" });
    try {
      const { app } = await limited.app();
      const t0 = performance.now();
      const rs = await Promise.all(Array.from({ length: 12 }, () => limited.call("GET", `/postback?app_id=${app.id}`)));
      const refills = Math.floor((performance.now() - t0) / 200); // one token per 200 ms at 5/s
      const ok = rs.filter((r) => r.status === 200).length;
      const tooMany = rs.filter((r) => r.status === 429);
      expect(ok).toBeGreaterThanOrEqual(5);
      expect(ok).toBeLessThanOrEqual(5 + refills);
      expect(tooMany.length).toBe(12 - ok);
      expect(tooMany[0]!.body.error).toBe("rate limit exceeded: at most 5 requests per second per client address");
      expect(Number(tooMany[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // X-Forwarded-For from an untrusted peer changes nothing
      expect((await limited.call("GET", `/postback?app_id=${app.id}`, undefined, { "x-forwarded-for": "203.0.113.9" })).status).toBe(429);
      // the SDK budget is separate (per app_id)
      expect((await limited.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: "x" })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  test("X-Forwarded-For is believed from a trusted proxy: each client has its own budget", async () => {
    const proxied = await startTestStack({ POSTBACK_RATE_LIMIT: "3", TRUSTED_PROXIES: "127.0.0.1" });
    try {
      const { app } = await proxied.app();
      const from = (ip: string) => proxied.call("GET", `/postback?app_id=${app.id}&external_id=${ip}`, undefined, { "x-forwarded-for": `198.51.100.1, ${ip}` });
      const a = await Promise.all(Array.from({ length: 12 }, () => from("203.0.113.1")));
      const b = await Promise.all(Array.from({ length: 3 }, () => from("203.0.113.2")));
      expect(a.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(1);
      expect(b.every((r) => r.status === 200)).toBe(true);
      await proxied.settle();
      const log = await proxied.t.ctx.db.select().from(activityLog).where(and(eq(activityLog.appId, app.id), eq(activityLog.externalId, "203.0.113.2")));
      expect(log.map((l) => l.ip)).toEqual(["203.0.113.2", "203.0.113.2", "203.0.113.2"]);
    } finally {
      await proxied.close();
    }
  });
});

async function waitFor(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met");
    await Bun.sleep(5);
  }
}
