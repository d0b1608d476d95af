import { createPrivateKey, sign, type KeyObject } from "node:crypto";
import type { Credential, GoogleOAuthAccessToken } from "firebase-admin/app";
import type { FcmServiceAccount } from "./types";

/**
 * A firebase-admin `Credential` (the public hook for "where do access tokens come from") that
 * runs the OAuth 2.0 JWT-bearer grant of a service account against a configurable token URL.
 *
 * firebase-admin's own `cert()` goes through google-auth-library, whose token URL is a constant
 * and whose Bun fetch path takes no CA; this credential does the same grant (RFC 7523: an RS256
 * assertion with iss = client_email, scope, aud = token URL) so tests reach the FCM peer and
 * production reaches oauth2.googleapis.com with the same code. firebase-admin caches the token
 * and refreshes it five minutes before expiry.
 */

export const GOOGLE_OAUTH_TOKEN_URL = "https://oauth2.googleapis.com/token";
export const FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** Why a token could not be had: `retryable` for 5xx/429/network, not for a refused grant. */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(message: string, readonly retryable: boolean, readonly status?: number) {
    super(message);
  }
}

export interface ServiceAccountCredentialOptions {
  tokenUrl?: string;
  /** Extra CA (PEM) to trust for the token endpoint; tests only. */
  ca?: string;
  timeoutMs?: number;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

export function signAssertion(sa: FcmServiceAccount, key: KeyObject, aud: string, nowSec = Math.floor(Date.now() / 1000)): string {
  const header = { alg: "RS256", typ: "JWT" };
  const payload = { iss: sa.client_email, scope: FCM_SCOPE, aud, iat: nowSec, exp: nowSec + 3600 };
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign("sha256", Buffer.from(input), key).toString("base64url")}`;
}

export class ServiceAccountCredential implements Credential {
  private readonly key: KeyObject;
  private readonly tokenUrl: string;
  /** Throws OAuthError (not retryable) when the service account cannot be used at all. */
  constructor(private readonly sa: FcmServiceAccount, private readonly opts: ServiceAccountCredentialOptions = {}) {
    if (!sa || typeof sa.client_email !== "string" || !sa.client_email || typeof sa.project_id !== "string" || !sa.project_id) {
      throw new OAuthError("service account lacks project_id or client_email", false);
    }
    try {
      this.key = createPrivateKey(sa.private_key);
    } catch {
      throw new OAuthError("service account private_key is not a valid PEM key", false);
    }
    if (this.key.asymmetricKeyType !== "rsa") throw new OAuthError("service account private_key is not an RSA key", false);
    this.tokenUrl = opts.tokenUrl ?? GOOGLE_OAUTH_TOKEN_URL;
  }

  async getAccessToken(): Promise<GoogleOAuthAccessToken> {
    const body = new URLSearchParams({ grant_type: GRANT_TYPE, assertion: signAssertion(this.sa, this.key, this.tokenUrl) });
    let res: Response;
    try {
      res = await fetch(this.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
        ...(this.opts.ca ? { tls: { ca: this.opts.ca } } : {}),
      } as RequestInit);
    } catch (e) {
      throw new OAuthError(`token endpoint unreachable: ${(e as Error)?.name ?? "error"}`, true);
    }
    let json: any = null;
    try {
      json = await res.json();
    } catch {
      // handled below: a non-JSON answer is an error whatever the status
    }
    if (!res.ok || typeof json?.access_token !== "string" || typeof json?.expires_in !== "number") {
      const retryable = res.status === 429 || res.status >= 500;
      // error/error_description are Google's codes (invalid_grant, ...), never secrets.
      throw new OAuthError(`token grant refused: ${res.status} ${json?.error ?? ""} ${json?.error_description ?? ""}`.trim(), retryable, res.status);
    }
    return { access_token: json.access_token, expires_in: json.expires_in };
  }
}
