import { Elysia } from "elysia";
import { CreateAppBody, UpdateAppBody, AppObject, CredentialsSummary, FcmCredentialsBody, ApnsCredentialsBody, ErrorBody } from "@pushstack/schema";
import { Type } from "@sinclair/typebox";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string) => ({ tags: ["Apps"], summary });

export function appRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/apps" })
    .use(authed(ctx, tokens))
    .get("", ({ actor }) => svc.listApps(ctx, actor), { response: { 200: Type.Array(AppObject) }, detail: detail("List the caller's apps") })
    .post(
      "",
      async ({ actor, body, set }) => {
        const app = await svc.createApp(ctx, actor, body);
        set.status = 201;
        return app;
      },
      { body: CreateAppBody, response: { 201: AppObject, 403: ErrorBody }, detail: detail("Create an app (plan app limit applies)") },
    )
    .get("/:app_id", ({ actor, params }) => svc.getApp(ctx, actor, pathId(params.app_id, "app")), {
      response: { 200: AppObject, 404: ErrorBody },
      detail: detail("Get an app"),
    })
    .patch("/:app_id", ({ actor, params, body }) => svc.updateApp(ctx, actor, pathId(params.app_id, "app"), body), {
      body: UpdateAppBody,
      response: { 200: AppObject, 404: ErrorBody },
      detail: detail("Rename, set the app link, archive or unarchive"),
    })
    .delete(
      "/:app_id",
      async ({ actor, params, set }) => {
        await svc.deleteApp(ctx, actor, pathId(params.app_id, "app"));
        set.status = 204;
      },
      { detail: detail("Delete an app with its devices and attachments") },
    )
    .post("/:app_id/postback-token/rotate", ({ actor, params }) => svc.rotatePostbackToken(ctx, actor, pathId(params.app_id, "app")), {
      response: { 200: AppObject },
      detail: detail("Issue a new postback token; the old one stops working at once"),
    })
    .post("/:app_id/vapid/rotate", ({ actor, params }) => svc.rotateVapid(ctx, actor, pathId(params.app_id, "app")), {
      response: { 200: AppObject },
      detail: detail("Generate a new VAPID key pair (existing web subscriptions must re-subscribe)"),
    })
    .get("/:app_id/credentials", async ({ actor, params }) => (await svc.getApp(ctx, actor, pathId(params.app_id, "app"))).credentials, {
      response: { 200: CredentialsSummary },
      detail: detail("Which transport credentials are set (never the secrets)"),
    })
    .put("/:app_id/credentials/fcm", ({ actor, params, body }) => svc.setFcmCredentials(ctx, actor, pathId(params.app_id, "app"), body.service_account), {
      body: FcmCredentialsBody,
      response: { 200: CredentialsSummary },
      detail: detail("Set the Firebase service account (stored encrypted)"),
    })
    .put("/:app_id/credentials/apns", ({ actor, params, body }) => svc.setApnsCredentials(ctx, actor, pathId(params.app_id, "app"), body), {
      body: ApnsCredentialsBody,
      response: { 200: CredentialsSummary },
      detail: detail("Set the APNs .p8 token key (stored encrypted)"),
    })
    .delete("/:app_id/credentials/:kind", ({ actor, params }) => svc.deleteCredentials(ctx, actor, pathId(params.app_id, "app"), params.kind), { params: Type.Object({ app_id: Type.String(), kind: Type.Union([Type.Literal("fcm"), Type.Literal("apns")], { error: "kind must be fcm or apns" }) }), response: { 200: CredentialsSummary }, detail: detail("Remove FCM or APNs credentials") });
}
