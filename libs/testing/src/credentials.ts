import { createECDH, generateKeyPairSync, randomBytes, randomUUID, type ECDH } from "node:crypto";
import webpush from "web-push";

/** Test credentials, fresh keys every call: nothing secret is ever checked in. */

export interface TestServiceAccount {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

/** A Google service-account JSON with a fresh RSA-2048 key, as the Firebase console hands out. */
export function makeServiceAccount(projectId = `pushstack-test-${randomBytes(4).toString("hex")}`): TestServiceAccount {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyId = randomBytes(20).toString("hex");
  return {
    type: "service_account",
    project_id: projectId,
    private_key_id: keyId,
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: `firebase-adminsdk-${keyId.slice(0, 5)}@${projectId}.iam.gserviceaccount.com`,
    client_id: String(BigInt(`0x${randomBytes(8).toString("hex")}`)),
    token_uri: "https://oauth2.googleapis.com/token",
  };
}

export interface TestApnsKey {
  /** The .p8 file content (PKCS#8 PEM of an EC P-256 key). */
  keyP8: string;
  keyId: string;
  teamId: string;
}

const alnum = (n: number) => randomBytes(n).toString("hex").toUpperCase().slice(0, n);

/** An APNs auth key (.p8) with a 10-character key id and team id, as Apple issues them. */
export function makeApnsKey(teamId = alnum(10)): TestApnsKey {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { keyP8: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), keyId: alnum(10), teamId };
}

/** A hex APNs device token (32 bytes), as an iOS device reports it. */
export function makeApnsDeviceToken(): string {
  return randomBytes(32).toString("hex");
}

/** An FCM registration token shaped like the real ones (instance id, colon, APA91b...). */
export function makeFcmToken(): string {
  return `${randomBytes(16).toString("base64url")}:APA91b${randomBytes(104).toString("base64url")}`;
}

export function makeVapidKeys(): { publicKey: string; privateKey: string } {
  return webpush.generateVAPIDKeys();
}

export interface TestWebPushSubscription {
  /** What a browser's PushSubscription.toJSON() gives, the device's transport token. */
  subscription: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
  /** The browser side: its ECDH key and auth secret, so a peer can decrypt. */
  privateKey: ECDH;
  authSecret: string;
}

/** A browser-like Web Push subscription for `endpoint`, keeping the user agent's private key. */
export function makeWebPushSubscription(endpoint = `https://push.peer.test/push/${randomUUID()}`): TestWebPushSubscription {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const authSecret = randomBytes(16).toString("base64url");
  return {
    subscription: { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: authSecret } },
    privateKey: ecdh,
    authSecret,
  };
}
