import { Elysia } from "elysia";
import { adminRequired } from "@pushstack/http";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "./tokens";
import { authenticate } from "./service";

/**
 * Bearer auth for a module: every route of the module that uses it gets `actor`, resolved before
 * body validation so an anonymous caller gets 401, not a 400 about its body.
 */
export function authed(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia().derive({ as: "scoped" }, async ({ request }) => ({
    actor: await authenticate(ctx, tokens, request.headers.get("authorization")),
  }));
}

/** Admin-only module: 401 without a token, 403 `admin access required` without admin access. */
export function adminOnly(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia().derive({ as: "scoped" }, async ({ request }) => {
    const actor = await authenticate(ctx, tokens, request.headers.get("authorization"));
    if (!actor.isAdmin) throw adminRequired();
    return { actor };
  });
}
