/**
 * The words {TimeOfDay} and {Weekday} print, in the 10 languages chosen for CPA traffic, and the
 * mapping from a device's free-form language code to one of them.
 *
 * Static tables rather than Intl at run time: the output must not change with the ICU build of the
 * runtime (Intl's short weekdays carry dots and vary between versions), and a lookup is cheaper.
 * The full weekday names are checked against Intl in the tests.
 */

/**
 * Chosen for the biggest CPA/affiliate push markets: India (hi), Indonesia (id), Brazil/Portugal (pt),
 * LatAm/Spain (es), Russia/CIS (ru), Turkey (tr), and the EU tier-1 markets (de, fr, it), plus English,
 * the fallback for every other language.
 */
export const SUPPORTED_LANGUAGES = ["en", "es", "pt", "ru", "de", "fr", "it", "tr", "id", "hi"] as const;
export type Lang = (typeof SUPPORTED_LANGUAGES)[number];

/** morning (6-11), afternoon (12-17), evening (18-22), night (23-5). Lower case, as in running text. */
const TIME_OF_DAY: Record<Lang, readonly [string, string, string, string]> = {
  en: ["morning", "afternoon", "evening", "night"],
  es: ["mañana", "tarde", "noche", "noche"],
  pt: ["manhã", "tarde", "noite", "noite"],
  ru: ["утро", "день", "вечер", "ночь"],
  de: ["Morgen", "Nachmittag", "Abend", "Nacht"], // German nouns are capitalised
  fr: ["matin", "après-midi", "soir", "nuit"],
  it: ["mattina", "pomeriggio", "sera", "notte"],
  tr: ["sabah", "öğleden sonra", "akşam", "gece"],
  id: ["pagi", "siang", "malam", "malam"],
  hi: ["सुबह", "दोपहर", "शाम", "रात"],
};

/** Sunday first, as Date.getUTCDay() counts. */
const WEEKDAY: Record<Lang, readonly string[]> = {
  en: ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
  es: ["domingo", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado"],
  pt: ["domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"],
  ru: ["воскресенье", "понедельник", "вторник", "среда", "четверг", "пятница", "суббота"],
  de: ["Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"],
  fr: ["dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"],
  it: ["domenica", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato"],
  tr: ["Pazar", "Pazartesi", "Salı", "Çarşamba", "Perşembe", "Cuma", "Cumartesi"],
  id: ["Minggu", "Senin", "Selasa", "Rabu", "Kamis", "Jumat", "Sabtu"],
  hi: ["रविवार", "सोमवार", "मंगलवार", "बुधवार", "गुरुवार", "शुक्रवार", "शनिवार"],
};

/** Abbreviations as written in each language, without trailing dots. */
const WEEKDAY_SHORT: Record<Lang, readonly string[]> = {
  en: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
  es: ["dom", "lun", "mar", "mié", "jue", "vie", "sáb"],
  pt: ["dom", "seg", "ter", "qua", "qui", "sex", "sáb"],
  ru: ["вс", "пн", "вт", "ср", "чт", "пт", "сб"],
  de: ["So", "Mo", "Di", "Mi", "Do", "Fr", "Sa"],
  fr: ["dim", "lun", "mar", "mer", "jeu", "ven", "sam"],
  it: ["dom", "lun", "mar", "mer", "gio", "ven", "sab"],
  tr: ["Paz", "Pzt", "Sal", "Çar", "Per", "Cum", "Cmt"],
  id: ["Min", "Sen", "Sel", "Rab", "Kam", "Jum", "Sab"],
  hi: ["रवि", "सोम", "मंगल", "बुध", "गुरु", "शुक्र", "शनि"],
};

/** Hour of the local day (0-23) to the TimeOfDay slot. */
const SLOT_OF_HOUR = [3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3];

export const timeOfDayWords = (lang: Lang): readonly string[] => TIME_OF_DAY[lang];
export const weekdayName = (lang: Lang, day: number, short: boolean): string =>
  (short ? WEEKDAY_SHORT : WEEKDAY)[lang][day];

/** Slot 0-3 for a local second-of-day in [0, 86400). */
export const slotOfSecond = (sec: number): number => SLOT_OF_HOUR[(sec / 3600) | 0];

/**
 * A device's language setting, as the resolved language and whether Turkic case rules apply
 * (dotted/dotless i: Turkish and Azerbaijani, per Unicode SpecialCasing).
 * Accepts "pt", "pt-BR", "pt_BR", "PT"; anything unknown, empty or unset is English.
 */
export interface LangInfo {
  lang: Lang;
  turkic: boolean;
  /** Small integer for array-indexed caches: langIndex * 2 + turkic. */
  key: number;
}

const INFOS = new Map<string, LangInfo>();
const CACHE_LIMIT = 1024; // device languages are a handful of codes; the cap keeps junk values from growing it
const EN: LangInfo = { lang: "en", turkic: false, key: 0 };

function resolveUncached(raw: string): LangInfo {
  let end = 0;
  while (end < raw.length && end < 16) {
    const c = raw.charCodeAt(end);
    if (c === 45 /* - */ || c === 95 /* _ */) break;
    end++;
  }
  const primary = raw.slice(0, end).trim().toLowerCase();
  const idx = (SUPPORTED_LANGUAGES as readonly string[]).indexOf(primary);
  const turkic = primary === "tr" || primary === "az";
  const langIdx = idx < 0 ? 0 : idx;
  return { lang: SUPPORTED_LANGUAGES[langIdx], turkic, key: langIdx * 2 + (turkic ? 1 : 0) };
}

export function resolveLanguage(raw: string | null | undefined): LangInfo {
  if (typeof raw !== "string" || raw === "") return EN;
  let info = INFOS.get(raw);
  if (info === undefined) {
    info = resolveUncached(raw);
    if (INFOS.size >= CACHE_LIMIT) INFOS.clear();
    INFOS.set(raw, info);
  }
  return info;
}

/** Number of distinct LangInfo keys, for array-indexed caches. */
export const LANG_KEYS = SUPPORTED_LANGUAGES.length * 2;

export const upperCase = (s: string, turkic: boolean): string => (turkic ? s.toLocaleUpperCase("tr") : s.toUpperCase());
export const lowerCase = (s: string, turkic: boolean): string => (turkic ? s.toLocaleLowerCase("tr") : s.toLowerCase());
