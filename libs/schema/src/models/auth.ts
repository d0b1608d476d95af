import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common";

export const RegisterBody = Type.Object({
  email: Type.String({ format: "email", maxLength: 254, error: "email must be a valid e-mail address" }),
  password: Type.String({ minLength: 8, maxLength: 256, error: "password must be 8 to 256 characters" }),
});

export const LoginBody = Type.Object({
  email: Type.String({ maxLength: 254, error: "email is required" }),
  password: Type.String({ maxLength: 256, error: "password is required" }),
});

export const UserObject = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  is_admin: Type.Boolean(),
});

export const RegisterResponse = Type.Object({ token: Type.String(), user: UserObject });
export const LoginResponse = Type.Object({ token: Type.String(), expires_at: Timestamp });

export const ProfileObject = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  is_admin: Type.Boolean(),
  plan: Type.String(),
  subscription_status: Type.String(),
  balance_cents: Type.Integer(),
  created_at: Timestamp,
  /** How the caller authenticated: "jwt" or "api_key". */
  auth: Type.String(),
  api_key_scope: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
