import { expect, test } from "bun:test";
import { bindSend, compile, toClickUrl } from "./index";

test("a rendered click URL is percent-encoded where a macro value needs it, and refused when it is no http(s) URL", () => {
  const tpl = bindSend(compile("https://t.example/c?sub={{external_id}}&s={{tag:segment}}"), { now: new Date(0), rotation: 0, app: { id: 1, name: "A", app_link: null } });
  const url = toClickUrl(tpl.render({ external_id: "user 7", language: "en", country: null, platform: "web", platform_name: null, tz_sec: 0, tags: { segment: "ruß" } }));
  expect(url).toBe("https://t.example/c?sub=user%207&s=ru%C3%9F");
  expect(toClickUrl("https://t.example/a%20b?x=1&y=%26")).toBe("https://t.example/a%20b?x=1&y=%26");
  expect(toClickUrl("  https://t.example/  ")).toBe("https://t.example/");
  expect(toClickUrl("?sub=7")).toBeNull(); // {{app_link}} rendered empty
  expect(toClickUrl("javascript:alert(1)")).toBeNull();
  expect(toClickUrl("ftp://t.example/")).toBeNull();
});
