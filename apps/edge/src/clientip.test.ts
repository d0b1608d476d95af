import { expect, test } from "bun:test";
import { clientIp, normalizeIp, rateKey } from "./clientip";

const none = new Set<string>();
const proxies = new Set(["10.0.0.1", "10.0.0.2"]);

test("the socket address, IPv4-mapped IPv6 unwrapped", () => {
  expect(clientIp("203.0.113.5", null, none)).toBe("203.0.113.5");
  expect(clientIp("::ffff:203.0.113.5", null, none)).toBe("203.0.113.5");
  expect(normalizeIp(" 2001:DB8::1 ")).toBe("2001:db8::1");
  expect(clientIp(null, null, none)).toBe("unknown");
});

test("X-Forwarded-For is ignored unless the peer is a trusted proxy", () => {
  expect(clientIp("203.0.113.5", "198.51.100.7", none)).toBe("203.0.113.5");
  expect(clientIp("203.0.113.5", "198.51.100.7", proxies)).toBe("203.0.113.5");
});

test("behind trusted proxies: the right-most hop that is not a proxy", () => {
  expect(clientIp("10.0.0.1", "198.51.100.7", proxies)).toBe("198.51.100.7");
  // the client wrote the left part itself: it cannot pick its address
  expect(clientIp("10.0.0.1", "1.2.3.4, 198.51.100.7", proxies)).toBe("198.51.100.7");
  expect(clientIp("10.0.0.1", "1.2.3.4, 198.51.100.7, 10.0.0.2", proxies)).toBe("198.51.100.7");
  expect(clientIp("10.0.0.1", "10.0.0.2", proxies)).toBe("10.0.0.1");
  expect(clientIp("10.0.0.1", "not-an-ip", proxies)).toBe("10.0.0.1");
  expect(clientIp("::ffff:10.0.0.1", "2001:db8::7", proxies)).toBe("2001:db8::7");
});

test("rate keys: IPv4 as is, IPv6 by /64", () => {
  expect(rateKey("203.0.113.5")).toBe("203.0.113.5");
  expect(rateKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
  expect(rateKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
  expect(rateKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
  expect(rateKey("::1")).toBe("0:0:0:0::/64");
});
