import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A self-signed certificate the peers serve and the clients under test trust (as `ca`).
 *
 * One certificate names every host a peer impersonates, so a client keeps the real provider host
 * as TLS server name and `:authority` (what the real library sends) while it connects to 127.0.0.1.
 * It is generated at runtime with the openssl CLI (node:crypto cannot issue X.509 certificates)
 * and memoised per process; nothing is written to the repository.
 */
export interface PeerTls {
  /** PEM private key of the peer. */
  key: string;
  /** PEM certificate; also what a client passes as `ca`. */
  cert: string;
}

export const PEER_TLS_HOSTS = [
  "localhost",
  "fcm.googleapis.com",
  "oauth2.googleapis.com",
  "api.push.apple.com",
  "api.sandbox.push.apple.com",
  "push.peer.test",
] as const;

let cached: PeerTls | null = null;

export function peerTls(): PeerTls {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "pushstack-peer-tls-"));
  try {
    const keyPath = join(dir, "key.pem");
    const certPath = join(dir, "cert.pem");
    const san = ["IP:127.0.0.1", ...PEER_TLS_HOSTS.map((h) => `DNS:${h}`)].join(",");
    const proc = Bun.spawnSync([
      "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", keyPath, "-out", certPath, "-days", "2", "-subj", "/CN=pushstack test peer",
      "-addext", `subjectAltName=${san}`,
      "-addext", "basicConstraints=critical,CA:TRUE",
    ], { stdout: "ignore", stderr: "pipe" });
    if (proc.exitCode !== 0) throw new Error(`openssl failed: ${proc.stderr.toString()}`);
    cached = { key: readFileSync(keyPath, "utf8"), cert: readFileSync(certPath, "utf8") };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
