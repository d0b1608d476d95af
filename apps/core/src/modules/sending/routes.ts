import { Elysia } from "elysia";
import { AccountAnalyticsQuery, AnalyticsQuery, AnalyticsReport, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { adminOnly, authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import { accountAnalytics, appAnalytics, packAnalytics } from "./analytics";

const errors = { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const FIGURES =
  "Filters: `date_from`, `date_to` (YYYY-MM-DD, UTC, inclusive), `source`, `push_id`, `pack_id`, `scheduler_id`, `template_id`. " +
  "Rows by push, scheduler or template carry `source` (`pack_scheduled`, `pack_event` or `scheduler`). " +
  "Sent and failed come from delivery results, delivered and clicked from SDK reports (once per recipient); CTR = clicked / delivered (0 when nothing was delivered). " +
  "Read from daily aggregates: a send counts on the UTC day it was sent.";

/** Analytics group: per app, over the caller's apps, and (administrators) per pack over every account. */
export function analyticsRoutes(ctx: CoreContext, tokens: TokenSigner) {
  const user = new Elysia()
    .use(authed(ctx, tokens))
    .get("/api/v3/apps/:app_id/analytics", ({ actor, params, query }) => appAnalytics(ctx, actor, pathId(params.app_id, "app"), query), {
      query: AnalyticsQuery,
      response: { 200: AnalyticsReport, ...errors },
      detail: {
        tags: ["Analytics"],
        summary: "An app's sent, failed, delivered, clicked and CTR, by day, push, pack, scheduler or template",
        description: "`group_by`: `day` (default, every plan), `push`, `pack`, `scheduler`, `template` (full analytics: Pro plan or above). " + FIGURES,
      },
    })
    .get("/api/v3/analytics", ({ actor, query }) => accountAnalytics(ctx, actor, query), {
      query: AccountAnalyticsQuery,
      response: { 200: AnalyticsReport, ...errors },
      detail: {
        tags: ["Analytics"],
        summary: "The same figures over all the caller's apps (or `app_id`), also by app",
        description:
          "An app-scoped API key sees its app only. `group_by`: `day` (default, every plan), `app`, `push`, `pack`, `scheduler`, `template` (full analytics: Pro plan or above); " +
          "`group_by=app&pack_id=` compares the apps a pack is attached to. " +
          FIGURES,
      },
    });
  const admin = new Elysia()
    .use(adminOnly(ctx, tokens))
    .get("/api/v3/admin/push-packs/:pack_id/analytics", ({ params, query }) => packAnalytics(ctx, pathId(params.pack_id, "push pack"), query), {
      query: AnalyticsQuery,
      response: { 200: AnalyticsReport, ...errors },
      detail: {
        tags: ["Analytics", "Admin"],
        summary: "A pack's figures over every app it is sent to, whoever owns them (administrators)",
        description: "`group_by`: `day` (default), `app`, `push`, `pack`, `scheduler`, `template`. " + FIGURES,
      },
    });
  return new Elysia().use(user).use(admin);
}
