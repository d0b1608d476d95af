import { Elysia } from "elysia";
import { RegisterBody, LoginBody, RegisterResponse, LoginResponse, ProfileObject, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "./tokens";
import { authed } from "./plugin";
import * as auth from "./service";

export function authRoutes(ctx: CoreContext, tokens: TokenSigner) {
  const open = new Elysia()
    .post("/api/auth/register", async ({ body, set }) => {
      set.status = 201;
      return auth.register(ctx, tokens, body);
    }, { body: RegisterBody, response: { 201: RegisterResponse, 409: ErrorBody }, detail: { tags: ["Auth"], summary: "Create an account (Free plan, balance 0)" } })
    .post("/api/auth/login", ({ body }) => auth.login(ctx, tokens, body), {
      body: LoginBody,
      response: { 200: LoginResponse, 401: ErrorBody },
      detail: { tags: ["Auth"], summary: "Exchange e-mail and password for a JWT" },
    });
  const profile = new Elysia()
    .use(authed(ctx, tokens))
    .get("/api/v3/profile", ({ actor }) => auth.profile(ctx, actor), {
      response: { 200: ProfileObject },
      detail: { tags: ["Auth"], summary: "The caller's profile, with is_admin" },
    });
  return new Elysia().use(open).use(profile);
}
