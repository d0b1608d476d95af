import type { AppCredentialsEntry } from "@pushstack/schema";
import type { AppCredentials } from "./types";

/** The transports' view of an app's credentials, from the KV entry core publishes (after unsealing). */
export function credentialsFromEntry(e: AppCredentialsEntry): AppCredentials {
  return {
    appId: e.app_id,
    version: e.version,
    fcm: e.fcm ? { serviceAccount: { project_id: e.fcm.project_id, client_email: e.fcm.client_email, private_key: e.fcm.private_key } } : undefined,
    apns: e.apns ? { keyP8: e.apns.key_p8, keyId: e.apns.key_id, teamId: e.apns.team_id, bundleId: e.apns.bundle_id, production: e.apns.production } : undefined,
    webpush: e.webpush ? { publicKey: e.webpush.public_key, privateKey: e.webpush.private_key, subject: e.webpush.subject } : undefined,
  };
}
