import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { CreateApiKeyBody, ApiKeyObject, CreatedApiKey, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as svc from "./service";

const detail = (summary: string) => ({ tags: ["API Keys"], summary });

export function apiKeyRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/api-keys" })
    .use(authed(ctx, tokens))
    .post(
      "",
      async ({ actor, body, set }) => {
        const key = await svc.createApiKey(ctx, actor, body);
        set.status = 201;
        return key;
      },
      {
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, 403: ErrorBody },
        detail: detail("Create a key: for one app (app_id), the whole account, or admin (scope: admin). The key text is shown once."),
      },
    )
    .get("", ({ actor }) => svc.listApiKeys(ctx, actor), { response: { 200: Type.Array(ApiKeyObject) }, detail: detail("List keys (never their secret)") })
    .delete(
      "/:key_id",
      async ({ actor, params, set }) => {
        await svc.revokeApiKey(ctx, actor, pathId(params.key_id, "API key"));
        set.status = 204;
      },
      { detail: detail("Revoke a key") },
    );
}
