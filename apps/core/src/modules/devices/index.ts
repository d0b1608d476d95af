import { Elysia } from "elysia";
import { DeviceList, DeviceObject, DeviceQueryBody, ErrorBody, ServerDeviceBody, ServerDeviceUpdateBody } from "@pushstack/schema";
import { notFound } from "@pushstack/http";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string, description?: string) => ({ tags: ["Devices"], summary, description });

/** Server-side registration under one prefix: `/api/v3/apps` and its legacy twin `/api/b/v2/apps`. */
function serverSide(ctx: CoreContext, tokens: TokenSigner, prefix: string, legacy: boolean) {
  const d = (summary: string, description?: string) => ({ ...detail(summary, description), deprecated: legacy || undefined });
  return new Elysia({ prefix })
    .use(authed(ctx, tokens))
    .post(
      "/:app_id/devices",
      async ({ actor, params, body, set }) => {
        const r = await svc.registerServerDevice(ctx, actor, pathId(params.app_id, "app"), body);
        set.status = r.created ? 201 : 200;
        return r.device;
      },
      {
        body: ServerDeviceBody,
        response: { 200: DeviceObject, 201: DeviceObject, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: d(
          "Server-side registration",
          "Registers the device `srv_<external_id>` (201), or updates it when it exists (200). A new device counts as an install: past the plan's cap (Free 5,000, Pro 50,000) it is refused with 403 naming the plan that allows more. Tags merge; an empty value removes a tag.",
        ),
      },
    )
    .put(
      "/:app_id/devices/:external_id",
      ({ actor, params, body }) => {
        const appId = pathId(params.app_id, "app");
        const externalId = params.external_id;
        if (!externalId || externalId.length > 255) throw notFound("device");
        return svc.updateServerDevice(ctx, actor, appId, externalId, body);
      },
      {
        body: ServerDeviceUpdateBody,
        response: { 200: DeviceObject, 400: ErrorBody, 404: ErrorBody },
        detail: d("Server-side update", "Updates the device registered server-side as `srv_<external_id>`; 404 when there is none."),
      },
    );
}

export function deviceRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ name: "devices" })
    .use(serverSide(ctx, tokens, "/api/v3/apps", false))
    .use(serverSide(ctx, tokens, "/api/b/v2/apps", true))
    .use(
      new Elysia({ prefix: "/api/v3/query" }).use(authed(ctx, tokens)).post("/app-instances", ({ actor, body }) => svc.queryDevices(ctx, actor, body), {
        body: DeviceQueryBody,
        response: { 200: DeviceList, 400: ErrorBody, 404: ErrorBody },
        detail: detail(
          "Query an app's devices",
          "Filters combine with AND: `country` (ISO code), `language` (`en` also matches `en-US`), `platform`, `external_id`, `events` (the device has them all), `tags` (all match). Ordered by id; `limit` 1-1000 (default 50); pass `next_cursor` as `cursor` for the next page.",
        ),
      }),
    );
}

