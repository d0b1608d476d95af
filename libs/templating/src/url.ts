/**
 * A rendered click URL as it may be sent: macro values are written into it as they are (a tag may hold
 * spaces or non-ASCII text), so it is re-serialised by the WHATWG URL parser, which percent-encodes what
 * a URL cannot carry and leaves what it can (an already-encoded `%20`, `&`, `=`) alone. Null when the
 * result is not an http(s) URL (say `{{app_link}}` rendered empty for an app without a link).
 */
export function toClickUrl(rendered: string): string | null {
  const text = rendered.trim();
  if (!URL.canParse(text)) return null;
  const url = new URL(text);
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}
