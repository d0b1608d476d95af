import { jwt } from "@elysiajs/jwt";

export interface TokenSigner {
  sign(userId: number): Promise<{ token: string; expiresAt: Date }>;
  /** The user id, or null for a bad, forged or expired token. */
  verify(token: string): Promise<number | null>;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text);
  if (!m) throw new Error(`bad duration "${text}", expected e.g. 7d, 12h`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** Built on @elysiajs/jwt (HS256); used by login/register and by the bearer-auth resolver. */
export function createTokenSigner(secret: string, expiresIn: string): TokenSigner {
  const seconds = parseDuration(expiresIn);
  const plugin = jwt({ name: "jwt", secret, exp: expiresIn });
  const j = (plugin as unknown as { decorator: { jwt: { sign(p: Record<string, unknown>): Promise<string>; verify(t?: string): Promise<Record<string, unknown> | false> } } }).decorator.jwt;
  return {
    async sign(userId) {
      const token = await j.sign({ sub: String(userId) });
      return { token, expiresAt: new Date(Date.now() + seconds * 1000) };
    },
    async verify(token) {
      const payload = await j.verify(token).catch(() => false as const);
      if (!payload || typeof payload.sub !== "string" || !/^\d+$/.test(payload.sub)) return null;
      return Number(payload.sub);
    },
  };
}
