/** PostgreSQL's unique_violation (23505), from postgres.js or PGlite, directly or wrapped by drizzle. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; cause?: { code?: string } };
  return err?.code === "23505" || err?.cause?.code === "23505";
}
