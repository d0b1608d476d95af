import { describe, expect, test } from "bun:test";
import type { LookupAddress } from "node:dns";
import { checkEndpoint, checkResolved, isPublicAddress, parseAllowedHosts } from "./webpush-guard";

const none = parseAllowedHosts([]);

describe("checkEndpoint", () => {
  test("accepts https to the well-known push services", () => {
    for (const e of [
      "https://fcm.googleapis.com/fcm/send/abc:APA91b",
      "https://updates.push.services.mozilla.com/wpush/v2/gAAAA",
      "https://web.push.apple.com/QGx",
      "https://wns2-by3p.notify.windows.com/w/?token=AQE",
    ]) {
      expect(checkEndpoint(e, none)).toMatchObject({ ok: true, listed: false });
    }
  });
  test("refuses other hosts, ports, schemes, credentials and lookalikes", () => {
    for (const e of [
      "https://evil.example/push", "http://fcm.googleapis.com/fcm/send/x", "https://fcm.googleapis.com:8443/x",
      "https://169.254.169.254/latest/meta-data/", "https://127.0.0.1/x", "https://[::1]/x", "https://localhost/x",
      "https://fcm.googleapis.com.evil.example/x", "https://notify.windows.com.evil/x", "https://user:pw@fcm.googleapis.com/x",
      "file:///etc/passwd", "gopher://fcm.googleapis.com/", "not a url", "", 42, null,
    ]) {
      expect(checkEndpoint(e, none).ok).toBe(false);
    }
  });
  test("WEBPUSH_ALLOWED_HOSTS: host (any port) or host:port, http only when listed", () => {
    const allowed = parseAllowedHosts(["push.internal", "10.0.0.5:8080", " [::1]:9443 ", ""]);
    expect(checkEndpoint("https://push.internal/x", allowed)).toMatchObject({ ok: true, listed: true });
    expect(checkEndpoint("http://push.internal:81/x", allowed)).toMatchObject({ ok: true, listed: true });
    expect(checkEndpoint("http://10.0.0.5:8080/x", allowed)).toMatchObject({ ok: true, listed: true });
    expect(checkEndpoint("http://10.0.0.5:8081/x", allowed).ok).toBe(false);
    expect(checkEndpoint("https://[::1]:9443/x", allowed)).toMatchObject({ ok: true, listed: true });
    expect(checkEndpoint("https://[::1]:9444/x", allowed).ok).toBe(false);
    expect(checkEndpoint("http://fcm.googleapis.com/x", allowed).ok).toBe(false);
  });
});

describe("isPublicAddress", () => {
  test("refuses loopback, private, link-local/metadata, CGNAT, multicast, reserved", () => {
    for (const ip of [
      "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
      "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1",
      "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "2001:db8::1", "2002:0a00:0001::1", "not-an-ip",
    ]) {
      expect({ ip, pub: isPublicAddress(ip) }).toEqual({ ip, pub: false });
    }
  });
  test("accepts global unicast", () => {
    for (const ip of ["8.8.8.8", "142.250.74.42", "172.32.0.1", "2a00:1450:4001:82b::200a", "::ffff:8.8.4.4", "64:ff9b::808:808"]) {
      expect({ ip, pub: isPublicAddress(ip) }).toEqual({ ip, pub: true });
    }
  });
});

describe("checkResolved", () => {
  const resolver = (answers: Record<string, string[]>) => (host: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
    cb(null, (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));

  test("allows a name whose every answer is public", async () => {
    expect(await checkResolved("fcm.googleapis.com", resolver({ "fcm.googleapis.com": ["142.250.74.42", "2a00:1450:4001:82b::200a"] }))).toBeNull();
  });
  test("refuses a name with any non-public answer (DNS pointing at metadata or loopback), or none", async () => {
    const r = resolver({ "rebind.example": ["8.8.8.8", "169.254.169.254"], "lo.example": ["127.0.0.1"], "v6.example": ["::1"], "empty.example": [] });
    for (const host of ["rebind.example", "lo.example", "v6.example", "empty.example"]) {
      expect((await checkResolved(host, r))?.code).toBe("EPUSHENDPOINTREFUSED");
    }
  });
  test("a resolver failure is an error, not a pass", async () => {
    const failing = (_h: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => cb(Object.assign(new Error("nx"), { code: "ENOTFOUND" }), []);
    await expect(checkResolved("x.example", failing)).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
