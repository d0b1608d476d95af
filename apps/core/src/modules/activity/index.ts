import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { ActivityList, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import { listActivity } from "./service";

export function activityRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/apps" }).use(authed(ctx, tokens)).get(
    "/:app_id/activity",
    ({ actor, params, query }) => listActivity(ctx, actor, pathId(params.app_id, "app"), query),
    {
      query: Type.Object({
        limit: Type.Optional(Type.String({ description: "1 to 500, default 50" })),
        cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
        kind: Type.Optional(Type.String({ description: "only this kind (postback)" })),
      }),
      response: { 200: ActivityList, 400: ErrorBody, 404: ErrorBody },
      detail: {
        tags: ["Devices"],
        summary: "The app's activity log (postbacks), newest first",
        description:
          "Every postback core processed: the parameters as sent (never the token), the devices it touched with the event as recorded on each (deposits numbered), and the outcome: `recorded`, or `refused` (a new device past the plan's install cap).",
      },
    },
  );
}
