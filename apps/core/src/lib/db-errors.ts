/** The SQLSTATE of a database error from postgres.js or PGlite, directly or wrapped by drizzle. */
function sqlState(e: unknown): string | undefined {
  const err = e as { code?: string; cause?: { code?: string } };
  return err?.code ?? err?.cause?.code;
}

/** PostgreSQL's unique_violation (23505). */
export function isUniqueViolation(e: unknown): boolean {
  return sqlState(e) === "23505";
}

/** A delete refused because another row refers to this one: restrict_violation (23001, ON DELETE RESTRICT) or foreign_key_violation (23503, NO ACTION). */
export function isStillReferenced(e: unknown): boolean {
  const code = sqlState(e);
  return code === "23001" || code === "23503";
}
