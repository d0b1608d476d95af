import { badRequest, notFound } from "@pushstack/http";

const ID = /^[1-9][0-9]{0,9}$/;
const MAX_ID = 2147483647;

/** Path ids: anything but a positive integer cannot name a resource, so it is a 404 for that resource. */
export function pathId(raw: string | undefined, what: string): number {
  if (!raw || !ID.test(raw)) throw notFound(what);
  const n = Number(raw);
  if (n > MAX_ID) throw notFound(what);
  return n;
}

/** Query-string ids (filters): a malformed one is a 400 naming the field; an id past `integer` is one too, not a database error. */
export function queryId(raw: string, field: string): number {
  if (!ID.test(raw) || Number(raw) > MAX_ID) throw badRequest(`${field} must be a positive integer`);
  return Number(raw);
}

/** A page size from the query string: `fallback` when absent, else an integer 1 to `max`. */
export function pageLimit(raw: string | undefined, max: number, fallback = 50): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!/^[0-9]{1,7}$/.test(raw) || n < 1 || n > max) throw badRequest(`limit must be an integer 1 to ${max}`);
  return n;
}

/**
 * Keyset cursors over a row id (lists ordered by id), tagged per list so one list's cursor is refused
 * by another. Opaque to clients: base64url of `<tag><id>`.
 */
export function idCursor(tag: string) {
  const re = new RegExp(`^${tag}([0-9]{1,15})$`);
  return {
    encode: (id: number) => Buffer.from(`${tag}${id}`).toString("base64url"),
    /** The id the cursor stands for; a 400 for anything else. */
    decode(cursor: string): number {
      const m = cursor.length <= 40 ? re.exec(Buffer.from(cursor, "base64url").toString("utf8")) : null;
      if (!m) throw badRequest("cursor must be the next_cursor of a previous page");
      return Number(m[1]);
    },
  };
}
