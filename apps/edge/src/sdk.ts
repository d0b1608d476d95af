import { Elysia } from "elysia";
import { AppError, badRequest } from "@pushstack/http";
import {
  ErrorBody,
  InstanceInfoAccepted,
  InstanceInfoBody,
  InstanceRegisterBody,
  InstanceRegistered,
  NotificationEventBody,
  SdkEventBody,
  StatusOk,
  checkDeviceInfo,
} from "@pushstack/schema";
import type { EdgeDeps } from "./deps";

const notFound = (what: string) => new AppError(404, "not_found", `${what} not found`);

/**
 * The SDK registration API under one prefix (`/api/v3/apps` and its legacy twin `/api/b/v2/apps`).
 * Every route: the app's request budget (429), then the app (404, 403 when archived), before the
 * body is validated, so an unknown app is 404 whatever it sent.
 */
export function sdkRoutes(deps: EdgeDeps, prefix: string, legacy = false) {
  const doc = (summary: string, description: string) => ({ tags: ["SDK"], summary, description, deprecated: legacy || undefined, security: [] });
  const responses = { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody, 503: ErrorBody };

  const instance = (appId: number, icId: string) => {
    const deviceId = deps.ids.verify(appId, icId);
    if (deviceId === null) throw notFound("instance");
    return deviceId;
  };

  return new Elysia({ prefix })
    // local: these routes only (a scoped hook would also run for the twin prefix mounted next to it)
    .derive(async ({ params }) => {
      const raw = (params as Record<string, string | undefined>).app_id ?? "";
      deps.limitSdk(raw);
      if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2147483647) throw notFound("app");
      const app = await deps.findApp(Number(raw));
      if (!app) throw notFound("app");
      if (app.archived) throw new AppError(403, "forbidden", "app is archived");
      return { app };
    })
    .post(
      "/:app_id/instances",
      async ({ app, body }) => {
        const r = await deps.register({ app_id: app.id, ic_token: body.ic_token, ext_id: body.ext_id?.trim() || null, at: deps.now().toISOString() });
        if (!r.ok) throw new AppError(r.status, "refused", r.error);
        return { id: deps.ids.sign(app.id, r.device_id), just_created: r.just_created };
      },
      {
        body: InstanceRegisterBody,
        response: { 200: InstanceRegistered, ...responses },
        detail: doc(
          "Register an SDK instance",
          "Finds or creates the device of `ic_token` (constant per device, up to 255 characters). `id` is the instance id for the other calls; `just_created` is true only for the call that created the device. A new device past the account's install cap is refused with 403 naming the plan that allows more. 1,000 requests per second per app_id.",
        ),
      },
    )
    .put(
      "/:app_id/instances/:ic_id/info",
      async ({ app, params, body, request, server }) => {
        const deviceId = instance(app.id, params.ic_id);
        // an empty lang or country means the SDK does not know it: keep what is stored
        const lang = body.lang === "" ? undefined : body.lang;
        const country = body.country === undefined || body.country === "" ? (deps.proxyCountry(request, server) ?? undefined) : body.country;
        const checked = checkDeviceInfo({ platform: body.platform_type, transport_type: body.transport_type, transport_token: body.transport_token, language: lang, country }, "platform_type");
        if (!checked.ok) throw badRequest(checked.error);
        const item: Record<string, unknown> = { kind: "info", at: deps.now().toISOString(), app_id: app.id, device_id: deviceId, platform: body.platform_type };
        if (checked.transportType !== undefined) item.transport_type = checked.transportType;
        if (checked.transportToken !== undefined) item.transport_token = checked.transportToken;
        if (checked.language !== undefined) item.language = checked.language;
        if (checked.country !== undefined) item.country = checked.country;
        if (body.tz_sec !== undefined) item.tz_sec = body.tz_sec;
        if (body.model !== undefined) item.model = body.model;
        if (body.ext_id?.trim()) item.ext_id = body.ext_id.trim();
        if (body.tags) item.tags = body.tags;
        await deps.ingest(item);
        return { status: "ok" as const, refresh_interval_sec: deps.infoRefreshSec };
      },
      {
        body: InstanceInfoBody,
        response: { 200: InstanceInfoAccepted, ...responses },
        detail: doc(
          "Send device info",
          "Platform, transport token, language, country, timezone, model and tags of the device. `transport_type` must match `platform_type` (android: fcm, ios: apns, web: webpush); it may be left out and is then taken from the platform. An empty or null `transport_token` clears it; a web push token is the subscription (object or its JSON text). Fields left out are kept; an empty tag value removes the tag. Without `country`, a country set by a trusted proxy (CF-IPCountry, X-Country-Code) is used. Answers once stored; send it again after `refresh_interval_sec`.",
        ),
      },
    )
    .post(
      "/:app_id/instances/:ic_id/events/notification",
      async ({ app, params, body }) => {
        const deviceId = instance(app.id, params.ic_id);
        await deps.ingest({ kind: "notification", at: deps.now().toISOString(), app_id: app.id, device_id: deviceId, msg_id: body.msg_id, event: body.event });
        return { status: "ok" as const };
      },
      {
        body: NotificationEventBody,
        response: { 200: StatusOk, ...responses },
        detail: doc("Report a push delivered or clicked", "`msg_id` from the received push; `event` is `delivered` or `clicked`. A repeated report of the same push and event counts once."),
      },
    )
    .post(
      "/:app_id/instances/:ic_id/events",
      async ({ app, params, body }) => {
        const deviceId = instance(app.id, params.ic_id);
        if (body.event === "delivered" || body.event === "clicked") throw badRequest("delivered and clicked are reported through events/notification with a msg_id");
        if (body.data && JSON.stringify(body.data).length > 4096) throw badRequest("data must be at most 4096 bytes of JSON");
        await deps.ingest({ kind: "sdk_event", at: deps.now().toISOString(), app_id: app.id, device_id: deviceId, event: body.event, data: body.data ?? null });
        return { status: "ok" as const };
      },
      {
        body: SdkEventBody,
        response: { 200: StatusOk, ...responses },
        detail: doc(
          "Report an SDK event: lifecycle or custom",
          "`event` is a lifecycle event (`onscreen`, `background`, `closed`) or a custom code (letters, digits, `_ . : -`, up to 64), with optional `data` (an object, up to 4 KB). The event is recorded on the device (a `dep` is numbered like a postback deposit), marks the device active and triggers matching push pack event pushes.",
        ),
      },
    );
}
