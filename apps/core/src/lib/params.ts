import { notFound } from "@pushstack/http";

/** Path ids: anything but a positive integer cannot name a resource, so it is a 404 for that resource. */
export function pathId(raw: string | undefined, what: string): number {
  if (!raw || !/^[1-9][0-9]{0,9}$/.test(raw)) throw notFound(what);
  const n = Number(raw);
  if (n > 2147483647) throw notFound(what);
  return n;
}
