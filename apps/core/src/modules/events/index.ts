import { Elysia } from "elysia";
import { DeclareEventBody, ErrorBody, EventList, EventObject, EventsQuery, UpdateEventBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string, description?: string) => ({ tags: ["Events"], summary, ...(description ? { description } : {}) });
const app = (p: { app_id: string }) => pathId(p.app_id, "app");

/**
 * Events group: an app's event codes with lifetime counters kept by ingest, and the custom codes its
 * owner declares (a name and a description; ingest records any code, declared or not).
 */
export function eventRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/apps/:app_id/events" })
    .use(authed(ctx, tokens))
    .get("", ({ actor, params, query }) => svc.listEvents(ctx, actor, app(params), query), {
      query: EventsQuery,
      response: { 200: EventList, 400: ErrorBody, 404: ErrorBody },
      detail: detail(
        "The app's event codes with counts",
        "Every code the app recorded (postbacks and SDK events; deposits as numbered: `dep`, `dep2`, ...) and every code declared " +
          "for it (0 counts until recorded), as `{items, next_cursor}`. `count` is how many events were recorded with the code, " +
          "`devices` on how many devices, `first_at`/`last_at` the first and last of them (null when never recorded); the counters " +
          "cover the app's whole life (there is no date range). `sort=count` (default): most recorded first, ties by code; " +
          "`sort=code`: by code (byte order). Pass `next_cursor` back as `cursor`, with the same sort, for the next page.",
      ),
    })
    .get("/:code", ({ actor, params }) => svc.getEvent(ctx, actor, app(params), params.code), {
      response: { 200: EventObject, 404: ErrorBody },
      detail: detail("One event code with its counts", "404 when the app neither recorded nor declared the code."),
    })
    .post(
      "",
      async ({ actor, params, body, set }) => {
        const e = await svc.declareEvent(ctx, actor, app(params), body);
        set.status = 201;
        return e;
      },
      {
        body: DeclareEventBody,
        response: { 201: EventObject, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: detail(
          "Declare a custom event code",
          "Gives a custom code a name and a description. `code` is what postbacks (`event=`) and SDK events send: 1 to 64 " +
            "letters, digits, `_ . : -`, case-sensitive. Built-in codes (install, reg, dep/depN, purchase, subscribe, onscreen, " +
            `background, closed) cannot be declared (400); a code already declared is a 409; at most ${svc.MAX_DEFINITIONS_PER_APP} per app. ` +
            "A code already recorded keeps its counts.",
        ),
      },
    )
    .patch("/:code", ({ actor, params, body }) => svc.updateEvent(ctx, actor, app(params), params.code, body), {
      body: UpdateEventBody,
      response: { 200: EventObject, 400: ErrorBody, 404: ErrorBody },
      detail: detail("Rename or describe a declared code", "`name` and `description`; null clears one. 404 when the code is not declared."),
    })
    .delete(
      "/:code",
      async ({ actor, params, set }) => {
        await svc.deleteEvent(ctx, actor, app(params), params.code);
        set.status = 204;
      },
      { response: { 404: ErrorBody }, detail: detail("Remove a declaration", "The code's counters stay; it is still listed while it has been recorded.") },
    );
}
