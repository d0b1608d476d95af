import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { apps } from "@pushstack/schema";
import { eq } from "drizzle-orm";
import { startTestCore, type TestCore } from "../../testing/harness";

let t: TestCore;
beforeAll(async () => {
  t = await startTestCore();
});
afterAll(() => t.close());

const rsaPem = () => generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const ecPem = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();

describe("apps CRUD", () => {
  test("create answers 201 with the owner's app object", async () => {
    const u = await t.user();
    const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "My app", platform: "web" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: expect.any(Number), name: "My app", platform: "web", archived: false, app_link: null });
    expect(r.body.postback_token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(r.body.vapid_public_key).toMatch(/^[A-Za-z0-9_-]{80,}$/);
    expect(new Date(r.body.created_at).toISOString()).toBe(r.body.created_at);
    const list = await t.req("GET", "/api/v3/apps", { token: u.token });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((a: any) => a.id)).toEqual([r.body.id]);
  });

  test("get, patch (name, app_link, archived), delete", async () => {
    const u = await t.user();
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "android" } });
    const p = await t.req("PATCH", `/api/v3/apps/${app.id}`, { token: u.token, body: { name: "B", app_link: "https://play.example/app", archived: true } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: "B", app_link: "https://play.example/app", archived: true });
    const g = await t.req("GET", `/api/v3/apps/${app.id}`, { token: u.token });
    expect(g.body.archived).toBe(true);
    const clear = await t.req("PATCH", `/api/v3/apps/${app.id}`, { token: u.token, body: { app_link: null, archived: false } });
    expect(clear.body).toMatchObject({ app_link: null, archived: false });
    const d = await t.req("DELETE", `/api/v3/apps/${app.id}`, { token: u.token });
    expect(d.status).toBe(204);
    expect((await t.req("GET", `/api/v3/apps/${app.id}`, { token: u.token })).status).toBe(404);
  });

  test("400 naming the field on bad input", async () => {
    const u = await t.user();
    const bad = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "x", platform: "windows" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: "platform must be one of android, ios, web" });
    const noName = await t.req("POST", "/api/v3/apps", { token: u.token, body: { platform: "web" } });
    expect(noName.body).toEqual({ error: "name is required" });
    const link = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "x", platform: "web", app_link: "javascript:alert(1)" } });
    expect(link.status).toBe(400);
    expect(link.body.error).toContain("app_link");
    const huge = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "x".repeat(300), platform: "web" } });
    expect(huge.status).toBe(400);
  });

  test("another account's app is 404, as is a non-numeric id", async () => {
    const a = await t.user();
    const b = await t.user();
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: a.token, body: { name: "A", platform: "web" } });
    for (const [m, body] of [["GET"], ["PATCH", { name: "x" }], ["DELETE"]] as const) {
      const r = await t.req(m, `/api/v3/apps/${app.id}`, { token: b.token, body });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: "app not found" });
    }
    expect((await t.req("GET", "/api/v3/apps", { token: b.token })).body).toEqual([]);
    expect((await t.req("GET", "/api/v3/apps/abc", { token: a.token })).status).toBe(404);
    expect((await t.req("GET", "/api/v3/apps/99999999999", { token: a.token })).status).toBe(404);
  });
});

describe("plan app limits", () => {
  test("Free allows 1 app; the 2nd is 403 naming Pro", async () => {
    const u = await t.user();
    expect((await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "1", platform: "web" } })).status).toBe(201);
    const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "2", platform: "web" } });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain("Pro plan");
  });
  test("Pro allows 5; the 6th is 403 naming Team; concurrent creates cannot pass the limit", async () => {
    const u = await t.user({ plan: "pro" });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => t.req("POST", "/api/v3/apps", { token: u.token, body: { name: `a${i}`, platform: "ios" } })));
    expect(results.filter((r) => r.status === 201).length).toBe(5);
    const refused = results.filter((r) => r.status === 403);
    expect(refused.length).toBe(3);
    expect(refused[0]!.body.error).toContain("Team plan");
  });
  test("Team is unlimited", async () => {
    const u = await t.user({ plan: "team" });
    for (let i = 0; i < 7; i++) expect((await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: `a${i}`, platform: "web" } })).status).toBe(201);
  });
});

describe("postback token and credentials", () => {
  test("rotating the postback token changes it", async () => {
    const u = await t.user();
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } });
    const r = await t.req("POST", `/api/v3/apps/${app.id}/postback-token/rotate`, { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.postback_token).not.toBe(app.postback_token);
  });

  test("FCM and APNs credentials are stored sealed and never returned", async () => {
    const u = await t.user();
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "android" } });
    const pk = rsaPem();
    const sa = { type: "service_account", project_id: "proj-1", client_email: "svc@proj-1.iam.gserviceaccount.com", private_key: pk };
    const f = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token, body: { service_account: sa } });
    expect(f.status).toBe(200);
    expect(f.body.fcm).toEqual({ project_id: "proj-1", client_email: sa.client_email });
    const p8 = ecPem();
    const a = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/apns`, {
      token: u.token,
      body: { key_p8: p8, key_id: "ABCDE12345", team_id: "TEAM123456", bundle_id: "com.example.app", production: false },
    });
    expect(a.status).toBe(200);
    expect(a.body.apns).toEqual({ key_id: "ABCDE12345", team_id: "TEAM123456", bundle_id: "com.example.app", production: false });
    expect(a.body.version).toBeGreaterThan(f.body.version);
    const everything = JSON.stringify([
      (await t.req("GET", `/api/v3/apps/${app.id}`, { token: u.token })).body,
      (await t.req("GET", `/api/v3/apps`, { token: u.token })).body,
      (await t.req("GET", `/api/v3/apps/${app.id}/credentials`, { token: u.token })).body,
    ]);
    const body = (pem: string) => pem.split("\n")[1]!;
    expect(everything).not.toContain(body(pk));
    expect(everything).not.toContain(body(p8));
    const [row] = await t.ctx.db.select().from(apps).where(eq(apps.id, app.id));
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(body(pk));
    expect(stored).not.toContain(body(p8));
    expect(row!.fcmCredentialsEnc!.startsWith("v1:")).toBe(true);
    expect(row!.vapidPrivateKeyEnc.startsWith("v1:")).toBe(true);
    const del = await t.req("DELETE", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token });
    expect(del.body.fcm).toBeNull();
  });

  test("bad credentials are 400 with a message", async () => {
    const u = await t.user();
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "ios" } });
    const r1 = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token, body: { service_account: "{nope" } });
    expect(r1).toMatchObject({ status: 400, body: { error: "service_account is not valid JSON" } });
    const r2 = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/fcm`, { token: u.token, body: { service_account: { project_id: "p" } } });
    expect(r2.body).toEqual({ error: "service_account.client_email is required" });
    const r3 = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/apns`, {
      token: u.token,
      body: { key_p8: rsaPem(), key_id: "ABCDE12345", team_id: "TEAM123456", bundle_id: "com.x", production: true },
    });
    expect(r3.body).toEqual({ error: "key_p8 must be an APNs auth key (EC P-256)" });
    const r4 = await t.req("PUT", `/api/v3/apps/${app.id}/credentials/apns`, {
      token: u.token,
      body: { key_p8: ecPem(), key_id: "short", team_id: "TEAM123456", bundle_id: "com.x", production: true },
    });
    expect(r4.status).toBe(400);
    expect(r4.body.error).toContain("key_id");
  });
});

describe("app directory", () => {
  test("core keeps the edge's directory current: create, archive, rotate, delete", async () => {
    const u = await t.user();
    const kv = await t.bus.kv("app_directory");
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } });
    const e1 = (await kv.get(String(app.id)))!.json<any>();
    expect(e1).toMatchObject({ id: app.id, archived: false, postback_token: app.postback_token, plan: "free" });
    await t.req("PATCH", `/api/v3/apps/${app.id}`, { token: u.token, body: { archived: true } });
    expect((await kv.get(String(app.id)))!.json<any>().archived).toBe(true);
    const rot = await t.req("POST", `/api/v3/apps/${app.id}/postback-token/rotate`, { token: u.token });
    expect((await kv.get(String(app.id)))!.json<any>().postback_token).toBe(rot.body.postback_token);
    await t.req("DELETE", `/api/v3/apps/${app.id}`, { token: u.token });
    expect(await kv.get(String(app.id))).toBeNull();
  });
});

describe("credentials for dispatchers", () => {
  test("core publishes each app's credentials sealed to the app_credentials bucket, bumping the version", async () => {
    const { open } = await import("@pushstack/config");
    const u = await t.user();
    const kv = await t.bus.kv("app_credentials");
    const { body: app } = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "ios" } });
    const raw1 = new TextDecoder().decode((await kv.get(String(app.id)))!.value);
    expect(raw1.startsWith("v1:")).toBe(true);
    const e1 = JSON.parse(open(t.ctx.config.masterKey, raw1));
    expect(e1).toMatchObject({ app_id: app.id, fcm: null, apns: null });
    expect(e1.webpush.public_key).toBe(app.vapid_public_key);
    expect(e1.webpush.subject).toBe(`mailto:${u.email}`);
    const p8 = ecPem();
    await t.req("PUT", `/api/v3/apps/${app.id}/credentials/apns`, {
      token: u.token,
      body: { key_p8: p8, key_id: "ABCDE12345", team_id: "TEAM123456", bundle_id: "com.example.app", production: true },
    });
    const e2 = JSON.parse(open(t.ctx.config.masterKey, new TextDecoder().decode((await kv.get(String(app.id)))!.value)));
    expect(e2.version).toBeGreaterThan(e1.version);
    expect(e2.apns).toEqual({ key_p8: p8, key_id: "ABCDE12345", team_id: "TEAM123456", bundle_id: "com.example.app", production: true });
    await t.req("DELETE", `/api/v3/apps/${app.id}`, { token: u.token });
    expect(await kv.get(String(app.id))).toBeNull();
  });
});
