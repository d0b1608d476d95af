import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { timingSafeEqual } from "node:crypto";
import { AppError, badRequest, json } from "@pushstack/http";
import { EventCodePattern, ErrorBody, StatusOk } from "@pushstack/schema";
import type { Server } from "bun";
import type { EdgeDeps } from "./deps";

const ID_FIELDS = ["external_id", "install_id", "gaid", "idfa"] as const;
const TAG_FIELDS = ["segment", "webmaster", "offer"] as const;
/** Parameters with a column of their own in the activity log (or secret: the token is never passed on). */
const OWN = new Set<string>(["app_id", "token", "event", ...TAG_FIELDS]);
const MAX_EXTRA_PARAMS = 20;

/** A parameter as sent: the first value of a repeated one; numbers as text; null for absent/empty. */
type Get = (name: string) => string | null;

function fromSearch(q: URLSearchParams): Get {
  return (name) => q.get(name) || null;
}

/** Form or JSON body (values of other types are refused by name), the query string as fallback. */
function fromBody(body: Record<string, unknown>, q: URLSearchParams): Get {
  return (name) => {
    let v = body[name];
    if (Array.isArray(v)) v = v[0];
    if (v === undefined || v === null || v === "") return q.get(name) || null;
    if (typeof v === "string") return v;
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    throw badRequest(`${name} must be a string`);
  };
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The spec's postback, in a fixed order of checks (the first failing one answers):
 *   1. `app_id` present                 400 `app_id is required`
 *   2. `app_id` a positive integer      400 `app_id must be a positive integer`
 *   3. the app exists                   404 `app not found`
 *   4. `token`, when given, is the app's 401 `invalid postback token`
 *   5. the app is not archived          403 `app is archived`
 *   6. no identifier (first non-empty of external_id, install_id, gaid, idfa): 200 `{"status":"ok"}`, nothing recorded
 *   7. field limits                     400 naming the field
 *   8. handed to the ingest stream      200 `{"status":"ok"}` once stored; 503 when it was not
 * Rate limiting (429) comes before all of them.
 */
async function accept(deps: EdgeDeps, get: Get, names: () => Iterable<string>, method: "GET" | "POST", ip: string): Promise<void> {
  let rawAppId: string | undefined;
  try {
    rawAppId = get("app_id")?.trim();
  } catch {
    throw badRequest("app_id must be a positive integer"); // a JSON true, object, ...
  }
  if (!rawAppId) throw badRequest("app_id is required");
  if (!/^[0-9]{1,20}$/.test(rawAppId) || /^0+$/.test(rawAppId)) throw badRequest("app_id must be a positive integer");
  const appId = Number(rawAppId);
  const app = deps.knownApp(appId) ?? (await deps.findApp(appId));
  if (!app) throw new AppError(404, "not_found", "app not found");
  const token = get("token");
  if (token && !sameText(token, app.postback_token)) throw new AppError(401, "unauthorized", "invalid postback token");
  if (app.archived) throw new AppError(403, "forbidden", "app is archived");

  let idField: string | null = null;
  let externalId: string | null = null;
  for (const f of ID_FIELDS) {
    const v = get(f)?.trim();
    if (v) {
      idField = f;
      externalId = v;
      break;
    }
  }
  if (!externalId) return;
  if (externalId.length > 255) throw badRequest(`${idField} must be at most 255 characters`);
  const event = get("event")?.trim() || null;
  if (event !== null && !EventCodePattern.test(event)) throw badRequest("event must be 1 to 64 characters of letters, digits, _ . : -");
  const tags: Record<string, string> = {};
  for (const f of TAG_FIELDS) {
    const v = get(f)?.trim();
    if (!v) continue;
    if (v.length > 255) throw badRequest(`${f} must be at most 255 characters`);
    tags[f] = v;
  }
  // the rest, as sent, for the activity log (bounded; the token never leaves the edge)
  const params: Record<string, string> = Object.create(null);
  let extra = 0;
  for (const name of names()) {
    if (OWN.has(name) || Object.hasOwn(params, name) || name.length > 64) continue;
    if (++extra > MAX_EXTRA_PARAMS) break;
    let v: string | null;
    try {
      v = get(name);
    } catch {
      continue;
    }
    if (v) params[name] = v.slice(0, 1024);
  }
  await deps.ingest({ kind: "postback", at: deps.now().toISOString(), app_id: appId, ip, method, external_id: externalId, event, tags, params });
}

/** Built per request from a constant text: cheaper on the hot path than serialising an object. */
const OK_TEXT = '{"status":"ok"}';
const OK_INIT = { headers: { "content-type": "application/json" } };
const ok = () => new Response(OK_TEXT, OK_INIT);

const queryOf = (url: string) => {
  const i = url.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : url.slice(i + 1));
};

/**
 * GET /postback without Elysia, for Bun's native router (serve.ts): the same checks, answers and error
 * shape as the Elysia route below, minus the per-request hooks of the HTTP shell. CPA traffic is this
 * route; the rest of the API goes through Elysia.
 */
export function nativeGetPostback(deps: EdgeDeps) {
  return async (request: Request, server: Server<unknown>): Promise<Response> => {
    const given = request.headers.get("x-request-id")?.slice(0, 64);
    try {
      const ip = deps.limitPostback(request, server);
      const q = queryOf(request.url);
      await accept(deps, fromSearch(q), () => q.keys(), "GET", ip);
      // a success echoes the caller's request id; it only needs one of its own when something is logged
      return new Response(OK_TEXT, given ? { headers: { "content-type": "application/json", "x-request-id": given } } : OK_INIT);
    } catch (err) {
      const requestId = given || crypto.randomUUID();
      if (err instanceof AppError) return json(err.status, { error: err.message }, { "x-request-id": requestId, ...err.headers });
      deps.log.error("unhandled error", { request_id: requestId, method: "GET", path: "/postback", err });
      return json(500, { error: `internal server error (request id ${requestId})` }, { "x-request-id": requestId });
    }
  };
}

const paramsDoc = [
  ["app_id", "Application id (positive integer). Required."],
  ["token", "The app's postback token; when given it must match."],
  ["external_id", "The integrator's user id; the device with this external id is found or created."],
  ["install_id", "Alias of external_id (used when external_id is empty)."],
  ["gaid", "Alias of external_id (after install_id)."],
  ["idfa", "Alias of external_id (after gaid)."],
  ["event", "install, reg, dep (auto-numbered dep, dep2, ... per device) or a custom code; omitted: the device and its tags are updated, no event recorded."],
  ["segment", "Stored as the device tag segment."],
  ["webmaster", "Stored as the device tag webmaster."],
  ["offer", "Stored as the device tag offer."],
].map(([name, description]) => ({ name, in: "query", required: name === "app_id", schema: { type: "string" }, description }));

const description =
  "CPA conversion postback. Checks, in this order (the first failing one answers): `app_id` present (400 `app_id is required`), " +
  "`app_id` a positive integer (400 `app_id must be a positive integer`), the app exists (404 `app not found`), `token` when given " +
  "matches (401 `invalid postback token`), the app is not archived (403 `app is archived`). Without an identifier (first non-empty of " +
  "external_id, install_id, gaid, idfa) the answer is `{\"status\":\"ok\"}` and nothing is recorded. Otherwise the postback is stored " +
  "durably before the 200; core then finds or creates the device, stores segment/webmaster/offer as tags, records the event (deposits " +
  "numbered), fires triggers and logs it in the app's activity log. 429 past 100 requests per second per client IP (Retry-After); " +
  "503 when the ingest stream is unavailable (retry).";

const responses = { 200: StatusOk, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 503: ErrorBody };

export function postbackRoutes(deps: EdgeDeps) {
  return new Elysia({ name: "postback" })
    .get(
      "/postback",
      async ({ request, server }) => {
        const ip = deps.limitPostback(request, server);
        const q = queryOf(request.url);
        await accept(deps, fromSearch(q), () => q.keys(), "GET", ip);
        return ok();
      },
      { response: responses, detail: { tags: ["Postback"], summary: "Conversion postback (query string)", description, parameters: paramsDoc as never } },
    )
    .post(
      "/postback",
      async ({ request, server, body }) => {
        const ip = deps.limitPostback(request, server);
        const q = queryOf(request.url);
        let fields: Record<string, unknown>;
        if (typeof body === "string") {
          const text = body.trim();
          if (text.startsWith("{")) {
            try {
              fields = JSON.parse(text);
            } catch {
              throw badRequest("malformed request body");
            }
          } else fields = Object.fromEntries(new URLSearchParams(text));
        } else if (body === undefined || body === null) fields = {};
        else if (typeof body === "object" && !Array.isArray(body)) fields = body as Record<string, unknown>;
        else throw badRequest("request body must be a JSON object or form data");
        if (!fields || typeof fields !== "object" || Array.isArray(fields)) throw badRequest("request body must be a JSON object or form data");
        await accept(deps, fromBody(fields, q), () => new Set([...Object.keys(fields), ...q.keys()]), "POST", ip);
        return ok();
      },
      {
        body: Type.Any(),
        response: responses,
        detail: {
          tags: ["Postback"],
          summary: "Conversion postback (form data or JSON body)",
          description: `${description} Body parameters as for GET (form-encoded, multipart or JSON; numbers accepted as text); query-string parameters fill in any the body lacks.`,
          requestBody: {
            content: Object.fromEntries(
              ["application/json", "application/x-www-form-urlencoded"].map((t) => [
                t,
                { schema: { type: "object", properties: Object.fromEntries(paramsDoc.map((p) => [p.name, { type: "string", description: p.description }])), required: ["app_id"] } },
              ]),
            ),
          },
        },
      },
    );
}
