import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { badRequest, notFound } from "@pushstack/http";
import { ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { adminOnly } from "../auth/plugin";
import { runJob, type JobRegistry } from "./registry";

export { createJobRegistry, runJob, type JobDefinition, type JobRegistry } from "./registry";

/** `at` from the body or the query: ISO 8601 with a time zone (Z or an offset); default now. */
function parseAt(raw: unknown, now: Date): Date {
  if (raw === undefined || raw === null || raw === "") return now;
  if (typeof raw !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(raw)) {
    throw badRequest("at must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T23:59:00Z");
  }
  const d = new Date(raw);
  if (Number.isNaN(d.getTime())) throw badRequest("at must be a valid date-time");
  return d;
}

export function jobRoutes(ctx: CoreContext, tokens: TokenSigner, jobs: JobRegistry) {
  return new Elysia({ prefix: "/api/v3/admin/jobs" })
    .use(adminOnly(ctx, tokens))
    .get("", () => jobs.names().map((name) => ({ name, schedule: jobs.get(name)!.schedule ?? null })), {
      detail: { tags: ["Admin"], summary: "List periodic jobs and their schedules (UTC cron patterns)" },
    })
    .post(
      "/:job",
      async ({ params, body, query }) => {
        if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body))) throw badRequest("request body must be a JSON object");
        const at = parseAt((body as { at?: unknown } | null)?.at ?? query.at, ctx.now());
        const summary = await runJob(ctx, jobs, params.job, at);
        if (!summary) throw notFound("job");
        return { job: params.job, at: at.toISOString(), ...summary };
      },
      {
        response: { 200: Type.Object({ job: Type.String(), at: Type.String() }, { additionalProperties: true }), 400: ErrorBody, 404: ErrorBody },
        detail: {
          tags: ["Admin"],
          summary: "Run a periodic job now, for the instant `at` (body or query, ISO 8601, default now); idempotent per instant",
          description:
            "Jobs: `billing-close-day` (the end-of-day charge for the UTC day containing `at`, with catch-up of missed days), `billing-expire-top-ups`, `billing-mail`, and those other modules register (e.g. `schedule-tick`). Answers a summary of what the run did.",
        },
      },
    );
}
