import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { CreatePushBody, UpdatePushBody, PushListQuery, PushObject, PushList, PreviewPushBody, PushPreview, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string, description?: string) => ({ tags: ["Pushes"], summary, ...(description ? { description } : {}) });

const ABOUT =
  "A push is one app's content in up to 50 languages; Schedulers send it. A device gets the translation of its language (exact, then the same primary language: `pt-BR` takes `pt`), else `default_language`. " +
  "`title` and `body` take operators and macros (see the templating rules); a template using `{Push={A|B}}` rotation needs A/B testing (Pro plan or above). " +
  "Errors name the field and the language: `translations.es.title: '{' is never closed at position 0 ...`.";

export function pushRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/pushes" })
    .use(authed(ctx, tokens))
    .post(
      "",
      async ({ actor, body, set }) => {
        const push = await svc.createPush(ctx, actor, body);
        set.status = 201;
        return push;
      },
      {
        // runs after authentication and before the schema: a bad translation gets a message naming its language
        transform: ({ body }) => svc.precheckTranslations(body, false),
        body: CreatePushBody,
        response: { 201: PushObject, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: detail(
          "Create a push (template) for an app",
          ABOUT +
            " Give `translations` (language → `{title, body?, icon_url?, image_url?, click_url?}`), or, for a one-language push, `title`, `body`, ... at the top level (the `default_language` translation, default `en`). `default_language` may be left out when there is one translation. Pushes of an archived app can be created and read (nothing is sent while it is archived).",
        ),
      },
    )
    .get("", ({ actor, query }) => svc.listPushes(ctx, actor, query), {
      query: PushListQuery,
      response: { 200: PushList, 400: ErrorBody, 404: ErrorBody },
      detail: detail("List pushes, newest first", "Keyset pagination: pass `next_cursor` as `cursor` for the next page (null on the last). An app-scoped API key lists its app's pushes only."),
    })
    .get("/:push_id", ({ actor, params }) => svc.getPush(ctx, actor, pathId(params.push_id, "push")), {
      response: { 200: PushObject, 404: ErrorBody },
      detail: detail("Get a push"),
    })
    .patch("/:push_id", ({ actor, params, body }) => svc.updatePush(ctx, actor, pathId(params.push_id, "push"), body), {
      transform: ({ body }) => svc.precheckTranslations(body, true),
      body: UpdatePushBody,
      response: { 200: PushObject, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: detail(
        "Change a push",
        "`name` and `default_language` replace. `translations` is merged by language: `{\"es\": {...}}` sets the Spanish translation (the whole translation: fields left out become unset), `{\"es\": null}` removes Spanish, languages not named stay. `default_language` must stay one of the translations. The app cannot change.",
      ),
    })
    .delete(
      "/:push_id",
      async ({ actor, params, set }) => {
        await svc.deletePush(ctx, actor, pathId(params.push_id, "push"));
        set.status = 204;
      },
      {
        response: { 409: ErrorBody, 404: ErrorBody },
        detail: detail("Delete a push", "204; 409 while a scheduler (of any status) uses it: delete the scheduler or give it another push first."),
      },
    )
    .post("/:push_id/preview", ({ actor, params, body }) => svc.previewPush(ctx, actor, pathId(params.push_id, "push"), body ?? {}), {
      transform: ({ body }) => svc.precheckPreview(body),
      // optional: an empty POST previews the default translation now
      body: Type.Optional(PreviewPushBody),
      response: { 200: PushPreview, 400: ErrorBody, 404: ErrorBody },
      detail: detail(
        "Render a push for a device",
        "What a device would receive: the translation chosen for `language` (or the device's language; fallback to `default_language`), rendered as the dispatcher renders a send: operators and macros of `title`, `body` and `click_url` applied for `device` (made-up fields) or `device_id` (a real device of the push's app), at instant `at` (default now), `{Push=}` variant `rotation` (default 0: the first), and `seed` to make `{a|b}` and `{Random}` repeatable. Without any language the default translation is rendered as for a device of that language.",
      ),
    });
}
