import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";

export const CreateApiKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, error: "name must be 1 to 100 characters" }),
  app_id: Type.Optional(Type.Integer({ minimum: 1, error: "app_id must be a positive integer" })),
  scope: Type.Optional(Type.Literal("admin", { error: 'scope must be "admin" when given' })),
});

export const ApiKeyObject = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  /** "account" (all the caller's resources), "app" (one app) or "admin". */
  scope: Type.String(),
  app_id: Nullable(Type.Integer()),
  /** The last 4 characters, to tell keys apart. */
  key_hint: Type.String(),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
});

export const CreatedApiKey = Type.Composite([ApiKeyObject, Type.Object({ key: Type.String({ description: "shown this once only" }) })]);
