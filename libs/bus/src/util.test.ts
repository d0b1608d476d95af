import { describe, expect, test } from "bun:test";
import { BusError } from "./types";
import { checkKey, checkSubject, decodeJson, duplicateWindow, encodeJson, subjectMatches, subjectsCollide } from "./util";

describe("subjects", () => {
  test("checkSubject accepts NATS subjects and wildcards only where allowed", () => {
    for (const ok of ["a", "a.b.c", "ingest.postback.v1", "a-b_c.9"]) expect(checkSubject(ok, false)).toBe(ok);
    for (const ok of ["a.*", "a.>", "*.b.>", ">"]) expect(checkSubject(ok, true)).toBe(ok);
    for (const bad of ["", "a..b", ".a", "a.", "a b", "a.*", "a.>", "a.b*", "a\tb", 7, null]) {
      expect(() => checkSubject(bad, false)).toThrow(BusError);
    }
    for (const bad of ["a.>.b", "a.b>", "a.**"]) expect(() => checkSubject(bad, true)).toThrow(BusError);
  });

  test("subjectMatches follows NATS wildcard rules", () => {
    const cases: [string, string, boolean][] = [
      ["a.b", "a.b", true],
      ["a.*", "a.b", true],
      ["a.*", "a.b.c", false],
      ["a.>", "a.b.c", true],
      ["a.>", "a", false],
      ["*.b", "a.b", true],
      ["a.b", "a.c", false],
      [">", "x.y", true],
    ];
    for (const [p, s, want] of cases) expect([p, s, subjectMatches(p, s)]).toEqual([p, s, want]);
  });

  test("subjectsCollide finds overlapping patterns", () => {
    expect(subjectsCollide("a.>", "a.b")).toBe(true);
    expect(subjectsCollide("a.*", "*.b")).toBe(true);
    expect(subjectsCollide("a.b", "a.c")).toBe(false);
    expect(subjectsCollide("a.*", "a.b.c")).toBe(false);
    expect(subjectsCollide("jobs.>", "temp.>")).toBe(false);
  });
});

test("keys, JSON helpers and the duplicate window", () => {
  expect(checkKey("app/1=x.y_z-2")).toBe("app/1=x.y_z-2");
  for (const bad of ["", "a b", ".a", "a.", "a..b", "a*", "ä"]) expect(() => checkKey(bad)).toThrow(BusError);
  expect(decodeJson(encodeJson({ a: [1, "x"] }))).toEqual({ a: [1, "x"] });
  expect(() => decodeJson(new Uint8Array([123]))).toThrow(BusError);
  expect(() => encodeJson(undefined)).toThrow(BusError);
  expect(duplicateWindow({})).toBe(120_000);
  expect(duplicateWindow({ maxAgeMs: 1000 })).toBe(1000);
  expect(duplicateWindow({ duplicateWindowMs: 500, maxAgeMs: 1000 })).toBe(500);
  expect(() => duplicateWindow({ duplicateWindowMs: -1 })).toThrow(BusError);
});
