import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestCore, type TestCore } from "../../testing/harness";

let t: TestCore;
beforeAll(async () => {
  t = await startTestCore({ ADMIN_EMAIL: "root@example.com", ADMIN_PASSWORD: "admin-password" });
});
afterAll(() => t.close());

describe("register", () => {
  test("201 with a token and the user; new accounts are Free with balance 0", async () => {
    const r = await t.req("POST", "/api/auth/register", { body: { email: "alice@example.com", password: "12345678" } });
    expect(r.status).toBe(201);
    expect(typeof r.body.token).toBe("string");
    expect(r.body.user).toEqual({ id: expect.any(Number), email: "alice@example.com", is_admin: false });
    const p = await t.req("GET", "/api/v3/profile", { token: r.body.token });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ email: "alice@example.com", is_admin: false, plan: "free", balance_cents: 0, subscription_status: "active" });
  });
  test("409 when the e-mail is taken, whatever its case", async () => {
    const r = await t.req("POST", "/api/auth/register", { body: { email: "ALICE@example.com", password: "12345678" } });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: "email already registered" });
  });
  test("400 naming the field on a short password, a bad e-mail, a missing field", async () => {
    const short = await t.req("POST", "/api/auth/register", { body: { email: "b@example.com", password: "1234567" } });
    expect(short.status).toBe(400);
    expect(short.body.error).toContain("password");
    const bad = await t.req("POST", "/api/auth/register", { body: { email: "not-an-email", password: "12345678" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("email");
    const missing = await t.req("POST", "/api/auth/register", { body: { password: "12345678" } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "email is required" });
  });
  test("400 on malformed JSON, never a 500", async () => {
    const r = await t.req("POST", "/api/auth/register", { rawBody: "{not json", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(typeof r.body.error).toBe("string");
  });
});

describe("login", () => {
  test("200 with a token that works on /api/v3", async () => {
    const r = await t.req("POST", "/api/auth/login", { body: { email: "alice@example.com", password: "12345678" } });
    expect(r.status).toBe(200);
    expect(typeof r.body.token).toBe("string");
    const p = await t.req("GET", "/api/v3/profile", { token: r.body.token });
    expect(p.body.email).toBe("alice@example.com");
  });
  test("401 on a wrong password or an unknown e-mail, same message", async () => {
    const a = await t.req("POST", "/api/auth/login", { body: { email: "alice@example.com", password: "wrong-password" } });
    const b = await t.req("POST", "/api/auth/login", { body: { email: "nobody@example.com", password: "whatever1" } });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    expect(a.body).toEqual({ error: "invalid email or password" });
    expect(b.body).toEqual(a.body);
  });
});

describe("bearer auth", () => {
  test("401 without a token, with garbage, with a forged JWT", async () => {
    expect((await t.req("GET", "/api/v3/profile")).status).toBe(401);
    expect((await t.req("GET", "/api/v3/profile")).body).toEqual({ error: "missing bearer token" });
    expect((await t.req("GET", "/api/v3/profile", { token: "garbage" })).status).toBe(401);
    const forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";
    expect((await t.req("GET", "/api/v3/profile", { token: forged })).body).toEqual({ error: "invalid or expired token" });
    expect((await t.req("GET", "/api/v3/profile", { token: "psk_live_nope" })).body).toEqual({ error: "invalid API key" });
  });
  test("an expired JWT is refused", async () => {
    const { createTokenSigner } = await import("./tokens");
    const short = createTokenSigner(t.ctx.config.jwtSecret, "1s");
    const { token } = await short.sign(1);
    await Bun.sleep(2100);
    expect((await t.req("GET", "/api/v3/profile", { token })).status).toBe(401);
  });
  test("401 comes before body validation", async () => {
    const r = await t.req("POST", "/api/v3/apps", { body: { nonsense: true } });
    expect(r.status).toBe(401);
  });
});

describe("admin bootstrap", () => {
  test("ADMIN_EMAIL/ADMIN_PASSWORD make an administrator", async () => {
    const r = await t.req("POST", "/api/auth/login", { body: { email: "root@example.com", password: "admin-password" } });
    expect(r.status).toBe(200);
    const p = await t.req("GET", "/api/v3/profile", { token: r.body.token });
    expect(p.body.is_admin).toBe(true);
  });
  test("running the bootstrap again is harmless and resets the password", async () => {
    const { ensureAdmin } = await import("./service");
    await ensureAdmin(t.ctx, "root@example.com", "another-password");
    await ensureAdmin(t.ctx, "root@example.com", "another-password");
    const old = await t.req("POST", "/api/auth/login", { body: { email: "root@example.com", password: "admin-password" } });
    expect(old.status).toBe(401);
    const now = await t.req("POST", "/api/auth/login", { body: { email: "root@example.com", password: "another-password" } });
    expect(now.status).toBe(200);
  });
});

describe("errors", () => {
  test("unknown routes answer 404 in the error shape", async () => {
    const r = await t.req("GET", "/api/v3/nope");
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: "not found" });
  });
  test("passwords are stored as argon2id hashes", async () => {
    const { users } = await import("@pushstack/schema");
    const rows = await t.ctx.db.select().from(users);
    for (const u of rows) expect(u.passwordHash.startsWith("$argon2id$")).toBe(true);
  });
});
