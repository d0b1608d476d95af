import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { InstanceIds } from "./instance-id";

test("an id verifies for its app only, and cannot be made up or altered", () => {
  const ids = new InstanceIds(randomBytes(32));
  const id = ids.sign(7, 123456);
  expect(id).toMatch(/^123456-[0-9a-f]{16}$/);
  expect(ids.verify(7, id)).toBe(123456);
  expect(ids.verify(8, id)).toBeNull();
  expect(ids.verify(7, id.replace("123456", "123457"))).toBeNull();
  expect(ids.verify(7, id.slice(0, -1) + (id.endsWith("0") ? "1" : "0"))).toBeNull();
  for (const bad of ["", "123456", "abc-0123456789abcdef", "0-0123456789abcdef", "1-XYZ", `${"9".repeat(30)}-0123456789abcdef`]) expect(ids.verify(7, bad)).toBeNull();
  // another deployment's key does not accept it; the same key (another edge) does
  expect(new InstanceIds(randomBytes(32)).verify(7, id)).toBeNull();
});

test("every edge with the same MASTER_KEY issues and accepts the same ids", () => {
  const key = randomBytes(32);
  expect(new InstanceIds(key).sign(1, 99)).toBe(new InstanceIds(Buffer.from(key)).sign(1, 99));
});
