/** The parse tree compile() produces. Every operator output is literal text: nothing is re-parsed. */

export type MacroName =
  | "app_name"
  | "app_id"
  | "app_link"
  | "external_id"
  | "language"
  | "country"
  | "platform"
  | "platform_name"
  | "timezone"
  | "tag";

export const MACRO_NAMES: readonly MacroName[] = [
  "app_name",
  "app_id",
  "app_link",
  "external_id",
  "language",
  "country",
  "platform",
  "platform_name",
  "timezone",
  "tag",
];

/** A {Date:FORMAT} piece: literal text or a token. */
export type DatePart = string | { tok: "DD" | "MM" | "YYYY" | "YY" };

export type Node =
  | { k: "text"; s: string }
  | { k: "choice"; variants: Node[][] } // {a|b|c}: per device
  | { k: "random"; min: number; max: number } // {Random=[min,max]}: per device
  | { k: "timeOfDay" } // per device (timezone, language)
  | { k: "date"; parts: DatePart[] } // per send
  | { k: "weekday"; short: boolean } // per send and language
  | { k: "push"; variants: Node[][] } // per send (rotation index)
  /**
   * Post-processing. `separable`: converting the parts one by one gives the same text as converting
   * their concatenation. Always true for Upper (upper-case mappings have no context in the default
   * and Turkic rules); for Lower only without Greek (final sigma) and U+0307 (Turkic dot after I).
   */
  | { k: "case"; upper: boolean; body: Node[]; separable: boolean }
  | { k: "macro"; name: MacroName; key: string }; // last; value inserted verbatim

/** A compiled template. Opaque to callers; pass it to render() or bindSend(). */
export interface Program {
  readonly source: string;
  /** @internal */ readonly nodes: Node[];
  /** @internal Some output depends on the device language (Weekday, TimeOfDay). */
  readonly usesLanguage: boolean;
  /** @internal Some output is case-converted (Upper, Lower), which depends on Turkic or not. */
  readonly usesCase: boolean;
  /** @internal The last send this program was bound to, so render() binds once per send. */
  cache: unknown;
}
