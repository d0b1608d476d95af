import { Elysia, type AnyElysia } from "elysia";
import { Type } from "@sinclair/typebox";
import {
  PackBody, PublishBody, LanguageBody, AttachBody, ScheduledPushBody, EventPushBody,
  PackObject, PackLanguageObject, ScheduledPushObject, EventPushObject, AttachmentObject, ErrorBody,
} from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed, adminOnly } from "../auth/plugin";
import { pathId } from "../../lib/params";
import type { Door } from "./access";
import * as svc from "./service";

const tags = ["Push packs"];
const d = (summary: string, extraTags: string[] = []) => ({ tags: [...tags, ...extraTags], summary });
const noContent = (set: { status?: number | string }) => {
  set.status = 204;
};

/** GET routes any authenticated user has: own packs plus published system packs (texts masked). */
function readingRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/push-packs" })
    .use(authed(ctx, tokens))
    .get("", ({ actor }) => svc.listPacks(ctx, actor), { response: { 200: Type.Array(PackObject) }, detail: d("Own packs plus published system packs") })
    .get("/:pack_id", ({ actor, params }) => svc.getPack(ctx, actor, pathId(params.pack_id, "pack")), { response: { 200: PackObject, 404: ErrorBody }, detail: d("One pack") })
    .get("/:pack_id/languages", ({ actor, params }) => svc.listLanguages(ctx, actor, pathId(params.pack_id, "pack")), {
      response: { 200: Type.Array(PackLanguageObject) },
      detail: d("Languages of a pack"),
    })
    .get(
      "/:pack_id/languages/:lang_id/scheduled",
      ({ actor, params }) => svc.listScheduled(ctx, actor, pathId(params.pack_id, "pack"), pathId(params.lang_id, "language")),
      { response: { 200: Type.Array(ScheduledPushObject) }, detail: d("Scheduled pushes of a language (system pack texts masked for non-admins)") },
    )
    .get(
      "/:pack_id/languages/:lang_id/events",
      ({ actor, params }) => svc.listEvents(ctx, actor, pathId(params.pack_id, "pack"), pathId(params.lang_id, "language")),
      { response: { 200: Type.Array(EventPushObject) }, detail: d("Event pushes of a language (system pack texts masked for non-admins)") },
    );
}

/**
 * The same management paths serve two doors: administrators' system packs under
 * /api/v3/admin/push-packs and the caller's own packs under /api/v3/push-packs.
 */
function managementRoutes(ctx: CoreContext, tokens: TokenSigner, door: Door) {
  const prefix = door === "admin" ? "/api/v3/admin/push-packs" : "/api/v3/push-packs";
  const extra = door === "admin" ? ["Admin"] : [];
  const what = door === "admin" ? "system pack" : "own pack";
  const pid = (p: { pack_id: string }) => pathId(p.pack_id, "pack");
  return new Elysia({ prefix })
    .use(door === "admin" ? adminOnly(ctx, tokens) : authed(ctx, tokens))
    .post(
      "",
      async ({ actor, body, set }) => {
        set.status = 201;
        return svc.createPack(ctx, actor, door, body);
      },
      { body: PackBody, response: { 201: PackObject }, detail: d(`Create a ${what}`, extra) },
    )
    .put("/:pack_id", ({ actor, params, body }) => svc.updatePack(ctx, actor, door, pid(params), body), {
      body: PackBody,
      response: { 200: PackObject, 404: ErrorBody },
      detail: d(`Update a ${what}`, extra),
    })
    .delete(
      "/:pack_id",
      async ({ actor, params, set }) => {
        await svc.deletePack(ctx, actor, door, pid(params));
        noContent(set);
      },
      { detail: d(`Delete a ${what} (with its languages, pushes and attachments)`, extra) },
    )
    .post(
      "/:pack_id/languages",
      async ({ actor, params, body, set }) => {
        set.status = 201;
        return svc.addLanguage(ctx, actor, door, pid(params), body.language_code);
      },
      { body: LanguageBody, response: { 201: PackLanguageObject, 409: ErrorBody }, detail: d("Add a language", extra) },
    )
    .delete(
      "/:pack_id/languages/:lang_id",
      async ({ actor, params, set }) => {
        await svc.deleteLanguage(ctx, actor, door, pid(params), pathId(params.lang_id, "language"));
        noContent(set);
      },
      { detail: d("Delete a language and all its scheduled and event pushes", extra) },
    )
    .post(
      "/:pack_id/languages/:lang_id/scheduled",
      async ({ actor, params, body, set }) => {
        set.status = 201;
        return svc.createScheduled(ctx, actor, door, pid(params), pathId(params.lang_id, "language"), body);
      },
      { body: ScheduledPushBody, response: { 201: ScheduledPushObject }, detail: d("Create a scheduled push (weekly, UTC)", extra) },
    )
    .put("/:pack_id/scheduled/:item_id", ({ actor, params, body }) => svc.updateScheduled(ctx, actor, door, pid(params), pathId(params.item_id, "push"), body), {
      body: ScheduledPushBody,
      response: { 200: ScheduledPushObject },
      detail: d("Replace a scheduled push", extra),
    })
    .delete(
      "/:pack_id/scheduled/:item_id",
      async ({ actor, params, set }) => {
        await svc.deleteScheduled(ctx, actor, door, pid(params), pathId(params.item_id, "push"));
        noContent(set);
      },
      { detail: d("Delete a scheduled push", extra) },
    )
    .post(
      "/:pack_id/languages/:lang_id/events",
      async ({ actor, params, body, set }) => {
        set.status = 201;
        return svc.createEvent(ctx, actor, door, pid(params), pathId(params.lang_id, "language"), body);
      },
      { body: EventPushBody, response: { 201: EventPushObject }, detail: d("Create an event push", extra) },
    )
    .put("/:pack_id/events/:item_id", ({ actor, params, body }) => svc.updateEvent(ctx, actor, door, pid(params), pathId(params.item_id, "push"), body), {
      body: EventPushBody,
      response: { 200: EventPushObject },
      detail: d("Replace an event push", extra),
    })
    .delete(
      "/:pack_id/events/:item_id",
      async ({ actor, params, set }) => {
        await svc.deleteEvent(ctx, actor, door, pid(params), pathId(params.item_id, "push"));
        noContent(set);
      },
      { detail: d("Delete an event push", extra) },
    );
}

function adminOnlyRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/admin/push-packs" })
    .use(adminOnly(ctx, tokens))
    .get("", () => svc.adminListPacks(ctx), { response: { 200: Type.Array(PackObject) }, detail: d("All system packs, drafts included", ["Admin"]) })
    .put("/:pack_id/publish", ({ params, body }) => svc.publishPack(ctx, pathId(params.pack_id, "pack"), body.is_published), {
      body: PublishBody,
      response: { 200: PackObject, 404: ErrorBody },
      detail: d("Publish or unpublish a system pack (unpublished: attachments kept, sending paused)", ["Admin"]),
    });
}

function attachRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/apps/:app_id/push-packs" })
    .use(authed(ctx, tokens))
    .get("", ({ actor, params }) => svc.listAttached(ctx, actor, pathId(params.app_id, "app")), {
      response: { 200: Type.Array(AttachmentObject) },
      detail: d("Packs attached to the app", ["Apps"]),
    })
    .post(
      "",
      async ({ actor, params, body, set }) => {
        const r = await svc.attachPack(ctx, actor, pathId(params.app_id, "app"), body.pack_id);
        set.status = r.created ? 201 : 200;
        return r.attachment;
      },
      {
        body: AttachBody,
        response: { 200: AttachmentObject, 201: AttachmentObject, 404: ErrorBody },
        detail: d("Attach an own pack or a published system pack (201; 200 if already attached; 404 for a pack the caller may not use)", ["Apps"]),
      },
    )
    .delete(
      "/:pack_id",
      async ({ actor, params, set }) => {
        await svc.detachPack(ctx, actor, pathId(params.app_id, "app"), pathId(params.pack_id, "pack"));
        noContent(set);
      },
      { detail: d("Detach a pack from the app", ["Apps"]) },
    );
}

export function packRoutes(ctx: CoreContext, tokens: TokenSigner): AnyElysia {
  // the route sets are typed one by one; their union is too large for the checker, and nothing reads it
  const parts: AnyElysia[] = [
    adminOnlyRoutes(ctx, tokens),
    managementRoutes(ctx, tokens, "admin"),
    readingRoutes(ctx, tokens),
    managementRoutes(ctx, tokens, "own"),
    attachRoutes(ctx, tokens),
  ];
  return parts.reduce((app, part) => app.use(part), new Elysia() as AnyElysia);
}
