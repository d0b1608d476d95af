import { describe, expect, test } from "bun:test";
import { compile, render, SUPPORTED_LANGUAGES, resolveLanguage, type RenderSend } from "./index";
import { timeOfDayWords } from "./locale";

const app = { id: 1, name: "App" };
const sendAt = (iso: string): RenderSend => ({ now: new Date(iso), rotation: 0, app });
const out = (tpl: string, language: string | null, iso = "2024-03-15T10:30:00Z", tz_sec: number | null = 0) =>
  render(compile(tpl), { language, tz_sec }, sendAt(iso));

test("the 10 languages, English first", () => {
  expect([...SUPPORTED_LANGUAGES]).toEqual(["en", "es", "pt", "ru", "de", "fr", "it", "tr", "id", "hi"]);
});

describe("resolveLanguage", () => {
  test("region, separator and case variants resolve to the primary language", () => {
    for (const raw of ["pt", "pt-BR", "pt_BR", "PT", "Pt-pt"]) expect(resolveLanguage(raw).lang).toBe("pt");
  });
  test("unknown, empty and unset fall back to English", () => {
    for (const raw of ["ja", "", null, undefined, "zz-ZZ", "-", "x".repeat(100)]) expect(resolveLanguage(raw).lang).toBe("en");
  });
  test("Turkic case rules for tr and az only; az still prints English words", () => {
    expect(resolveLanguage("tr-TR")).toMatchObject({ lang: "tr", turkic: true });
    expect(resolveLanguage("az")).toMatchObject({ lang: "en", turkic: true });
    expect(resolveLanguage("de")).toMatchObject({ lang: "de", turkic: false });
  });
});

describe("{Weekday} in every language", () => {
  // 2024-01-07 is a Sunday; Intl (ICU) is the independent reference for the names.
  const days = Array.from({ length: 7 }, (_, d) => `2024-01-${String(7 + d).padStart(2, "0")}T12:00:00Z`);
  for (const lang of SUPPORTED_LANGUAGES) {
    test(lang, () => {
      const long = new Intl.DateTimeFormat(lang, { weekday: "long", timeZone: "UTC" });
      const short = new Intl.DateTimeFormat(lang, { weekday: "short", timeZone: "UTC" });
      for (const iso of days) {
        expect(out("{Weekday}", lang, iso)).toBe(long.format(new Date(iso)));
        expect(out("{Weekday:short}", lang, iso)).toBe(short.format(new Date(iso)).replace(/\.$/, ""));
      }
    });
  }
  test("an unsupported device language gets English", () => {
    expect(out("{Weekday} {Weekday:short}", "ja-JP", "2024-03-15T10:00:00Z")).toBe("Friday Fri");
  });
});

describe("{TimeOfDay} in every language", () => {
  const expected: Record<string, string[]> = {
    en: ["morning", "afternoon", "evening", "night"],
    es: ["mañana", "tarde", "noche", "noche"],
    pt: ["manhã", "tarde", "noite", "noite"],
    ru: ["утро", "день", "вечер", "ночь"],
    de: ["Morgen", "Nachmittag", "Abend", "Nacht"],
    fr: ["matin", "après-midi", "soir", "nuit"],
    it: ["mattina", "pomeriggio", "sera", "notte"],
    tr: ["sabah", "öğleden sonra", "akşam", "gece"],
    id: ["pagi", "siang", "malam", "malam"],
    hi: ["सुबह", "दोपहर", "शाम", "रात"],
  };
  for (const lang of SUPPORTED_LANGUAGES) {
    test(lang, () => {
      expect([...timeOfDayWords(lang)]).toEqual(expected[lang]);
      // 09:00, 15:00, 20:00 and 02:00 UTC with a UTC device
      const at = ["09", "15", "20", "02"].map((h) => out("{TimeOfDay}", lang, `2024-03-15T${h}:00:00Z`));
      expect(at).toEqual(expected[lang]);
    });
  }
});
