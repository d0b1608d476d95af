import { and, eq, isNull, sql } from "drizzle-orm";
import { users, apiKeys, planOf } from "@pushstack/schema";
import { conflict, unauthorized } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import { isUniqueViolation } from "../../lib/db-errors";
import type { TokenSigner } from "./tokens";
import { sha256 } from "../../lib/crypto";
import { assertApiKeysAllowed, API_KEY_PREFIX } from "../apikeys/service";



export const userView = (u: typeof users.$inferSelect) => ({ id: u.id, email: u.email, is_admin: u.isAdmin });

export async function register(ctx: CoreContext, tokens: TokenSigner, input: { email: string; password: string }) {
  const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
  let user: typeof users.$inferSelect;
  try {
    [user] = await ctx.db.insert(users).values({ email: input.email.trim(), passwordHash }).returning() as [typeof users.$inferSelect];
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("email already registered");
    throw e;
  }
  const { token } = await tokens.sign(user.id);
  return { token, user: userView(user) };
}

// A fixed hash to compare against when the e-mail is unknown, so timing does not tell which e-mails exist.
let dummyHash: Promise<string> | null = null;

export async function login(ctx: CoreContext, tokens: TokenSigner, input: { email: string; password: string }) {
  const [user] = await ctx.db.select().from(users).where(sql`lower(${users.email}) = lower(${input.email.trim()})`);
  if (!user) {
    dummyHash ??= Bun.password.hash("not-a-password", { algorithm: "argon2id" });
    await Bun.password.verify(input.password, await dummyHash);
    throw unauthorized("invalid email or password");
  }
  if (!(await Bun.password.verify(input.password, user.passwordHash))) throw unauthorized("invalid email or password");
  const { token, expiresAt } = await tokens.sign(user.id);
  return { token, expires_at: expiresAt.toISOString() };
}

/** ADMIN_EMAIL/ADMIN_PASSWORD: make sure this administrator exists with this password. Safe on every replica. */
export async function ensureAdmin(ctx: CoreContext, email: string, password: string) {
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  const [existing] = await ctx.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
  if (existing) {
    const same = await Bun.password.verify(password, existing.passwordHash);
    if (!existing.isAdmin || !same) {
      await ctx.db.update(users).set({ isAdmin: true, ...(same ? {} : { passwordHash }), updatedAt: new Date() }).where(eq(users.id, existing.id));
    }
    return;
  }
  await ctx.db.insert(users).values({ email, passwordHash, isAdmin: true }).onConflictDoNothing();
  await ctx.db.update(users).set({ isAdmin: true }).where(sql`lower(${users.email}) = lower(${email})`);
}

/** Bearer token → Actor. Accepts a JWT or a `psk_live_` API key. */
export async function authenticate(ctx: CoreContext, tokens: TokenSigner, authorization: string | null): Promise<Actor> {
  const m = authorization ? /^Bearer\s+(\S{1,4096})\s*$/i.exec(authorization) : null;
  if (!m) throw unauthorized("missing bearer token");
  const token = m[1]!;
  if (token.startsWith(API_KEY_PREFIX)) {
    const [row] = await ctx.db
      .select({ key: apiKeys, user: users })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(and(eq(apiKeys.keyHash, sha256(token)), isNull(apiKeys.revokedAt)));
    if (!row) throw unauthorized("invalid API key");
    const now = ctx.now();
    if (!row.key.lastUsedAt || now.getTime() - row.key.lastUsedAt.getTime() > 60_000) {
      await ctx.db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.key.id));
    }
    const actor: Actor = {
      userId: row.user.id,
      email: row.user.email,
      isAdmin: row.key.scope === "admin" && row.user.isAdmin,
      plan: row.user.plan,
      subscriptionStatus: row.user.subscriptionStatus,
      via: "api_key",
      keyScope: row.key.scope,
      appId: row.key.scope === "app" ? row.key.appId : null,
    };
    // keys are a plan feature: a downgraded account's keys stop working until it upgrades again
    assertApiKeysAllowed(actor);
    return actor;
  }
  const userId = await tokens.verify(token);
  if (userId === null) throw unauthorized("invalid or expired token");
  const [user] = await ctx.db.select().from(users).where(eq(users.id, userId));
  if (!user) throw unauthorized("invalid or expired token");
  return {
    userId: user.id,
    email: user.email,
    isAdmin: user.isAdmin,
    plan: user.plan,
    subscriptionStatus: user.subscriptionStatus,
    via: "jwt",
    keyScope: null,
    appId: null,
  };
}

export async function profile(ctx: CoreContext, actor: Actor) {
  const [u] = await ctx.db.select().from(users).where(eq(users.id, actor.userId));
  if (!u) throw unauthorized();
  return {
    id: u.id,
    email: u.email,
    is_admin: u.isAdmin,
    plan: u.plan,
    subscription_status: u.subscriptionStatus,
    balance_cents: u.balanceCents,
    created_at: u.createdAt.toISOString(),
    auth: actor.via,
    api_key_scope: actor.keyScope,
  };
}
