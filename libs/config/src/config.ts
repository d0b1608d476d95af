import { mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * Configuration is read once from the environment, validated, and passed down explicitly.
 * Nothing else in the code base reads process.env.
 */
export interface Config {
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  natsUrl: string | null;
  /** Prefix of every NATS stream, subject and KV bucket of this deployment. */
  busPrefix: string;
  adminEmail: string | null;
  adminPassword: string | null;
  jwtSecret: string;
  jwtExpiresIn: string;
  /** 32 bytes, AES-256-GCM key for credentials at rest. */
  masterKey: Buffer;
  webpushAllowedHosts: string[];
  postbackRateLimit: number;
  sdkRateLimit: number;
  /** Addresses (exact IPs) whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  logLevel: "debug" | "info" | "warn" | "error";
  /** Billing e-mail (low-balance alerts): `smtp://user:pass@host:port`; null = alerts are logged, not sent. */
  smtpUrl: string | null;
  mailFrom: string;
  /** BTCPay Server (Greenfield API) for crypto top-ups; all four set, or top-ups answer 503. */
  btcpayUrl: string | null;
  btcpayApiKey: string | null;
  btcpayStoreId: string | null;
  btcpayWebhookSecret: string | null;
  /** Where this service is reached from outside (links in e-mails, payment redirects). */
  publicUrl: string | null;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

/**
 * Secrets that the operator did not configure are generated once and kept in DATA_DIR, so an
 * embedded install works with no configuration and keeps its sessions and credentials across restarts.
 */
function persistedSecrets(dataDir: string): { jwtSecret: string; masterKey: string } {
  const file = join(dataDir, "secrets.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  mkdirSync(dataDir, { recursive: true });
  const secrets = {
    jwtSecret: randomBytes(48).toString("base64url"),
    masterKey: randomBytes(32).toString("base64"),
  };
  writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  chmodSync(file, 0o600);
  return secrets;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(env.DATA_DIR || "./.data");
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// URL");
  }
  const natsUrl = env.NATS_URL || null;
  const needGenerated = !env.JWT_SECRET || !env.MASTER_KEY;
  const generated = needGenerated ? persistedSecrets(dataDir) : null;
  const jwtSecret = env.JWT_SECRET || generated!.jwtSecret;
  if (jwtSecret.length < 32) throw new ConfigError("JWT_SECRET must be at least 32 characters");
  const masterKey = Buffer.from(env.MASTER_KEY || generated!.masterKey, "base64");
  if (masterKey.length !== 32) throw new ConfigError("MASTER_KEY must be 32 bytes, base64-encoded");
  const adminEmail = env.ADMIN_EMAIL || null;
  const adminPassword = env.ADMIN_PASSWORD || null;
  if (!!adminEmail !== !!adminPassword) throw new ConfigError("ADMIN_EMAIL and ADMIN_PASSWORD go together");
  if (adminPassword && adminPassword.length < 8) throw new ConfigError("ADMIN_PASSWORD must be at least 8 characters");
  const logLevel = (env.LOG_LEVEL || "info") as Config["logLevel"];
  if (!["debug", "info", "warn", "error"].includes(logLevel)) throw new ConfigError("LOG_LEVEL must be debug|info|warn|error");
  const busPrefix = env.BUS_PREFIX || "ps";
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(busPrefix)) throw new ConfigError("BUS_PREFIX must be 1-32 of [A-Za-z0-9_-]");
  return {
    port: int(env, "PORT", 3000),
    dataDir,
    databaseUrl,
    natsUrl,
    busPrefix,
    adminEmail,
    adminPassword,
    jwtSecret,
    jwtExpiresIn: env.JWT_EXPIRES_IN || "7d",
    masterKey,
    webpushAllowedHosts: list(env.WEBPUSH_ALLOWED_HOSTS),
    postbackRateLimit: int(env, "POSTBACK_RATE_LIMIT", 100, 1),
    sdkRateLimit: int(env, "SDK_RATE_LIMIT", 1000, 1),
    trustedProxies: list(env.TRUSTED_PROXIES),
    logLevel,
    ...billingSettings(env),
  };
}

function optionalUrl(env: Env, name: string, schemes: string[]): string | null {
  const raw = env[name] || null;
  if (!raw) return null;
  let scheme = "";
  try {
    scheme = new URL(raw).protocol.replace(/:$/, "");
  } catch {}
  if (!schemes.includes(scheme)) throw new ConfigError(`${name} must be a ${schemes.join(" or ")} URL`);
  return raw;
}

function billingSettings(env: Env) {
  const btcpay = {
    btcpayUrl: optionalUrl(env, "BTCPAY_URL", ["http", "https"])?.replace(/\/+$/, "") ?? null,
    btcpayApiKey: env.BTCPAY_API_KEY || null,
    btcpayStoreId: env.BTCPAY_STORE_ID || null,
    btcpayWebhookSecret: env.BTCPAY_WEBHOOK_SECRET || null,
  };
  const set = Object.values(btcpay).filter(Boolean).length;
  if (set !== 0 && set !== 4) throw new ConfigError("BTCPAY_URL, BTCPAY_API_KEY, BTCPAY_STORE_ID and BTCPAY_WEBHOOK_SECRET go together");
  return {
    smtpUrl: optionalUrl(env, "SMTP_URL", ["smtp", "smtps"]),
    mailFrom: env.MAIL_FROM || "PushStack <billing@localhost>",
    ...btcpay,
    publicUrl: optionalUrl(env, "PUBLIC_URL", ["http", "https"])?.replace(/\/+$/, "") ?? null,
  };
}

/** For the start-up log line: every secret replaced, URLs stripped of their passwords. */
export function redactConfig(c: Config): Record<string, unknown> {
  const url = (u: string | null) => (u ? u.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@") : null);
  return {
    ...c,
    databaseUrl: url(c.databaseUrl),
    natsUrl: url(c.natsUrl),
    adminPassword: c.adminPassword ? "***" : null,
    jwtSecret: "***",
    masterKey: "***",
    // nodemailer also reads credentials from the query string (?pass=...): keep only scheme, user, host, port
    smtpUrl: c.smtpUrl ? c.smtpUrl.replace(/^(smtps?:\/\/)(?:([^:@/]*)(?::[^@/]*)?@)?([^/?#]*).*$/, (_m, s, u, h) => `${s}${u ? u + ":***@" : ""}${h}`) : null,
    btcpayApiKey: c.btcpayApiKey ? "***" : null,
    btcpayWebhookSecret: c.btcpayWebhookSecret ? "***" : null,
  };
}
