import { Type } from "@sinclair/typebox";
import { Nullable, Platform, Timestamp, Url } from "./common";

const Name = Type.String({ minLength: 1, maxLength: 255, error: "name must be 1 to 255 characters" });
const AppLink = Nullable(Type.String({ maxLength: 2048, pattern: "^https?://", error: "app_link must be an http(s) URL of at most 2048 characters" }));

export const CreateAppBody = Type.Object({ name: Name, platform: Platform, app_link: Type.Optional(AppLink) });
export const UpdateAppBody = Type.Object({
  name: Type.Optional(Name),
  app_link: Type.Optional(AppLink),
  archived: Type.Optional(Type.Boolean({ error: "archived must be a boolean" })),
});

export const CredentialsSummary = Type.Object({
  fcm: Nullable(Type.Object({ project_id: Type.String(), client_email: Type.String() })),
  apns: Nullable(Type.Object({ key_id: Type.String(), team_id: Type.String(), bundle_id: Type.String(), production: Type.Boolean() })),
  webpush: Type.Object({ vapid_public_key: Type.String() }),
  version: Type.Integer(),
});

export const AppObject = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  platform: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  postback_token: Type.String(),
  archived: Type.Boolean(),
  app_link: Nullable(Type.String()),
  vapid_public_key: Type.String(),
  credentials: CredentialsSummary,
});

export const FcmCredentialsBody = Type.Object({
  service_account: Type.Union([Type.String({ maxLength: 20000 }), Type.Record(Type.String(), Type.Unknown())], {
    error: "service_account must be the Firebase service-account JSON (object or string)",
  }),
});

export const ApnsCredentialsBody = Type.Object({
  key_p8: Type.String({ minLength: 1, maxLength: 10000, error: "key_p8 must be the text of the .p8 key" }),
  key_id: Type.String({ pattern: "^[A-Z0-9]{10}$", error: "key_id must be the 10-character APNs key id" }),
  team_id: Type.String({ pattern: "^[A-Z0-9]{10}$", error: "team_id must be the 10-character Apple team id" }),
  bundle_id: Type.String({ minLength: 1, maxLength: 255, pattern: "^[A-Za-z0-9.-]+$", error: "bundle_id must be the app's bundle identifier" }),
  production: Type.Boolean({ error: "production must be a boolean (false = sandbox)" }),
});

export { Url };
