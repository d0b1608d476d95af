import { randomBytes } from "node:crypto";
import { openPglite, openPostgres, type Database } from "./index";

/**
 * Every test file gets a database of its own: a fresh in-memory PGlite, or, when DATABASE_URL is set,
 * a new PostgreSQL database created for it and dropped at close. Files never share state.
 */
export async function createTestDatabase(): Promise<Database> {
  const base = process.env.DATABASE_URL;
  if (!base) return openPglite(null);
  const { default: postgres } = await import("postgres");
  const name = `ps_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = "/" + name;
  const database = await openPostgres(url.toString(), { max: 20 });
  return {
    ...database,
    async close() {
      await database.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    },
  };
}
