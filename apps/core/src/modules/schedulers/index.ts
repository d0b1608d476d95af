import { Elysia, t } from "elysia";
import { CreateSchedulerBody, ErrorBody, SchedulerList, SchedulerObject, SchedulerSent, SendSchedulerBody, UpdateSchedulerBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string, description?: string) => ({ tags: ["Schedulers"], summary, description });
const errors = { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

/**
 * Schedulers: send a push template (Pushes group) to an app's audience instantly, once at a time,
 * weekly, or when a device records an event. Thin routes; the rules are in service.ts.
 */
export function schedulerRoutes(ctx: CoreContext, tokens: TokenSigner) {
  const sid = (p: { scheduler_id: string }) => pathId(p.scheduler_id, "scheduler");
  return new Elysia({ prefix: "/api/v3/schedulers" })
    .use(authed(ctx, tokens))
    .post(
      "",
      async ({ actor, body, set }) => {
        const r = await svc.createScheduler(ctx, actor, body);
        set.status = 201;
        return r;
      },
      {
        body: CreateSchedulerBody,
        response: { 201: SchedulerObject, ...errors },
        detail: detail(
          "Create a scheduler",
          "Sends the push template `push_id` (a push of the same app) to the app's devices matching `filters`. " +
            "`instant`: sent at once (the scheduler is `completed`); `once`: at `send_at` (ISO 8601, in the future, at most a year ahead; sent in that minute, then `completed`; `missed` when the service could not send it within 10 minutes of `send_at`); " +
            "`weekly`: on `days_of_week` (0 = Monday .. 6 = Sunday) at `send_time` (HH:MM, UTC); " +
            "`event`: to each device that records `event_code` (as recorded: `dep3` is the third deposit), `delay_minutes` (0 to 43200) later, if it still matches the filters — the Event triggers feature (Pro plan or above). " +
            "Each device gets the translation of its language (exact, then same primary language), else the template's default language. " +
            "Nothing is sent while the app is archived, the account is past due, or the scheduler is paused.",
        ),
      },
    )
    .get("", ({ actor, query }) => svc.listSchedulers(ctx, actor, query), {
      query: t.Object({
        app_id: t.Optional(t.String({ description: "only this app's schedulers" })),
        type: t.Optional(t.String({ description: "instant | once | weekly | event" })),
        status: t.Optional(t.String({ description: "active | paused | completed | missed" })),
        limit: t.Optional(t.String({ description: "1 to 100, default 50" })),
        cursor: t.Optional(t.String({ description: "next_cursor of the previous page" })),
      }),
      response: { 200: SchedulerList, 400: ErrorBody, 404: ErrorBody },
      detail: detail("List schedulers", "Newest first; pass `next_cursor` as `cursor` for the next page."),
    })
    .get("/:scheduler_id", ({ actor, params }) => svc.getScheduler(ctx, actor, sid(params)), {
      response: { 200: SchedulerObject, 404: ErrorBody },
      detail: detail("Get a scheduler"),
    })
    .patch("/:scheduler_id", ({ actor, params, body }) => svc.updateScheduler(ctx, actor, sid(params), body), {
      body: UpdateSchedulerBody,
      response: { 200: SchedulerObject, ...errors },
      detail: detail(
        "Update, pause or resume a scheduler",
        "Changes the name, `push_id`, the schedule fields of its type (the type itself is fixed), `filters`, or `status` (`paused` stops it, and cancels a send of it still fanning out; `active` resumes it). " +
          "A completed or missed `once` scheduler is re-armed by a new `send_at`. Changing or resuming an event scheduler needs the Event triggers feature (Pro plan or above); pausing does not.",
      ),
    })
    .delete(
      "/:scheduler_id",
      async ({ actor, params, set }) => {
        await svc.deleteScheduler(ctx, actor, sid(params));
        set.status = 204;
      },
      { response: { 204: t.Void(), 404: ErrorBody }, detail: detail("Delete a scheduler", "Its pending event sends are dropped; a send of it still fanning out is cancelled.") },
    )
    .post(
      "/:scheduler_id/send",
      async ({ actor, params, body, set, request }) => {
        const r = await svc.sendSchedulerNow(ctx, actor, sid(params), body ?? {}, request.headers.get("idempotency-key"));
        set.status = r.created ? 201 : 200;
        return r.body;
      },
      {
        body: t.Optional(SendSchedulerBody),
        response: { 200: SchedulerSent, 201: SchedulerSent, ...errors },
        detail: detail(
          "Send a scheduler now",
          "Sends its push once, now, whatever its type, to its filtered audience; with `device_id`, to that device only (a test send, filters ignored). " +
            "Answers 201 with the `send_id`. With an `Idempotency-Key` header, a repeated request answers 200 with the first send instead of sending again. 409 while the scheduler is paused.",
        ),
      },
    );
}
