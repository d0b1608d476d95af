import type { ValidationError } from "elysia";

/**
 * Turns a TypeBox failure into one sentence a person can act on: the field it concerns and what is
 * expected. Schemas carry their own message in `error` where the generic one would not help.
 */
export function describeValidation(err: ValidationError): string {
  const first = err.valueError ?? err.all?.[0];
  const where = err.type === "query" ? "query parameter " : err.type === "params" ? "path parameter " : "";
  if (!first) return err.type === "body" ? "invalid request body" : `invalid ${err.type}`;
  const field = (first.path ?? "").replace(/^\//, "").replace(/\//g, ".");
  const custom = (first.schema as { error?: unknown } | undefined)?.error;
  // a missing property reports against the parent; its name is the last path part
  if (first.value === undefined && field) return `${where}${field} is required`;
  if (typeof custom === "string") return where + custom;
  if (!field) return err.type === "body" ? "request body must be a JSON object" : `invalid ${err.type}`;
  return `${where}${field}: ${first.message.toLowerCase()}`;
}
