import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";
import { Tags } from "./devices";

/**
 * Push templates ("Pushes" group): the content of a push in several languages, with operators and
 * macros, sent by Schedulers. The schemas check shapes; limits, language codes and template syntax are
 * checked by the service so that every 400 names the field and the language (`translations.es.title: ...`).
 */

/** Nullable whose failure reports this message instead of TypeBox's "expected union value". */
const orNull = <T extends TSchema>(s: T, error: string) => Type.Union([s, Type.Null()], { error });

export const PUSH_LIMITS = {
  name: 255,
  title: 255,
  body: 2000,
  url: 2048,
  translations: 50,
} as const;

const LANGUAGE_DOC = "language code such as en, pt or pt-BR (normalised as device languages are: pt_br and PT-br become pt-BR)";

// No custom `error`s here: the core checks translation entries before the schema does (a 400 then
// names the language, `translations.es.body must be ...`); these schemas describe them for /docs.
const translationFields = {
  title: Type.String({ description: "1 to 255 characters, not blank; operators and macros allowed" }),
  body: Type.Optional(Nullable(Type.String({ description: "at most 2000 characters; operators and macros allowed" }))),
  icon_url: Type.Optional(Nullable(Type.String({ description: "http(s) URL, at most 2048 characters" }))),
  image_url: Type.Optional(Nullable(Type.String({ description: "http(s) URL, at most 2048 characters" }))),
  click_url: Type.Optional(Nullable(Type.String({ description: "http(s) URL, at most 2048 characters; macros and operators allowed" }))),
};

/** One language of a push. Unknown keys are refused (a misspelt `bdy` would otherwise vanish silently). */
export const PushTranslationBody = Type.Object(translationFields, {
  additionalProperties: false,
  description:
    "`title` (1 to 255) and `body` (at most 2000) are templates: operators `{a|b}`, `{Random=[1,9]}`, `{TimeOfDay}`, `{Date:DD.MM}`, `{Weekday}`, `{Upper:..}`, `{Lower:..}`, `{Push={A|B}}` (A/B rotation: Pro plan or above) and macros `{{external_id}}`, `{{tag:key}}`, .... `icon_url`, `image_url`: http(s) URLs (at most 2048). `click_url`: an http(s) URL that may contain macros and operators, e.g. `{{app_link}}?sub={{external_id}}` (it must start with `http://`, `https://` or `{{app_link}}`).",
});

const Translations = Type.Record(Type.String(), PushTranslationBody, {
  description: `Language code → translation; 1 to 50 languages. Keys: ${LANGUAGE_DOC}.`,
  error: "translations must be an object: language code → {title, body?, icon_url?, image_url?, click_url?}",
});

const Name = Type.String({ minLength: 1, maxLength: 255, error: "name must be 1 to 255 characters" });
const DefaultLanguage = Type.String({
  maxLength: 35,
  description: `The translation a device gets when none matches its language; one of the translations' languages. A ${LANGUAGE_DOC}.`,
  error: "default_language must be a language code such as en or pt-BR",
});

export const CreatePushBody = Type.Object({
  app_id: Type.Integer({ minimum: 1, error: "app_id must be a positive integer" }),
  name: Name,
  default_language: Type.Optional(DefaultLanguage),
  translations: Type.Optional(Translations),
  // one-language shorthand: used when `translations` is absent
  title: Type.Optional(Type.String({ description: "Shorthand for a one-language push: the default language's title (when `translations` is absent)", error: "title must be a string" })),
  body: Type.Optional(orNull(Type.String(), "body must be a string or null")),
  icon_url: Type.Optional(orNull(Type.String(), "icon_url must be an http(s) URL or null")),
  image_url: Type.Optional(orNull(Type.String(), "image_url must be an http(s) URL or null")),
  click_url: Type.Optional(orNull(Type.String(), "click_url must be an http(s) URL (macros allowed) or null")),
});

export const UpdatePushBody = Type.Object({
  name: Type.Optional(Name),
  default_language: Type.Optional(DefaultLanguage),
  translations: Type.Optional(
    Type.Record(Type.String(), orNull(PushTranslationBody, "each translation must be an object {title, body?, icon_url?, image_url?, click_url?} or null"), {
      description:
        "Merged by language: a language given here gets this translation (the whole translation is replaced, not merged field by field); `null` removes that language; languages not named stay as they are. The default language cannot be removed (change `default_language` in the same request).",
      error: "translations must be an object: language code → translation or null",
    }),
  ),
});

export const PushListQuery = Type.Object({
  app_id: Type.Optional(Type.String({ description: "only this app's pushes (default: every app the caller reaches)" })),
  limit: Type.Optional(Type.String({ description: "1 to 100, default 50" })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});

const TranslationOut = Type.Object({
  title: Type.String(),
  body: Nullable(Type.String()),
  icon_url: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  click_url: Nullable(Type.String()),
});

export const PushObject = Type.Object({
  id: Type.Integer(),
  app_id: Type.Integer(),
  name: Type.String(),
  default_language: Type.String(),
  languages: Type.Array(Type.String(), { description: "The translations' languages, default first, then alphabetical" }),
  translations: Type.Record(Type.String(), TranslationOut),
  ab_testing: Type.Boolean({ description: "true when a template uses {Push={A|B}} rotation (a Pro plan feature)" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const PushList = Type.Object({
  items: Type.Array(PushObject, { description: "Newest first" }),
  next_cursor: Nullable(Type.String()),
});

const PreviewDevice = Type.Object(
  {
    external_id: Type.Optional(orNull(Type.String({ maxLength: 255 }), "device.external_id must be a string of at most 255 characters")),
    language: Type.Optional(orNull(Type.String({ maxLength: 35 }), "device.language must be a language code such as en or pt-BR")),
    country: Type.Optional(orNull(Type.String({ maxLength: 2 }), "device.country must be a 2-letter ISO 3166-1 code")),
    platform: Type.Optional(
      orNull(Type.Union([Type.Literal("android"), Type.Literal("ios"), Type.Literal("web")]), "device.platform must be one of android, ios, web"),
    ),
    platform_name: Type.Optional(orNull(Type.String({ maxLength: 255 }), "device.platform_name must be a string of at most 255 characters")),
    tz_sec: Type.Optional(orNull(Type.Integer({ minimum: -43200, maximum: 50400 }), "device.tz_sec must be an integer offset in seconds between -43200 and 50400")),
    tags: Type.Optional(orNull(Tags, "device.tags must be an object of at most 50 string values (keys: 1 to 64 letters, digits, _ . : -; values: at most 255 characters)")),
  },
  { description: "A made-up device: the fields macros, {TimeOfDay} and the choice of translation read" },
);

export const PreviewPushBody = Type.Object({
  language: Type.Optional(
    Type.String({
      maxLength: 35,
      description: "Render the translation a device of this language would get (exact, then same primary language, else the default); default: the device's language",
      error: "language must be a language code such as en or pt-BR",
    }),
  ),
  device: Type.Optional(PreviewDevice),
  device_id: Type.Optional(Type.Integer({ minimum: 1, description: "Preview for a real device of the push's app (instead of `device`)", error: "device_id must be a positive integer" })),
  at: Type.Optional(Type.String({ maxLength: 64, description: "The send instant ({Date}, {Weekday}, {TimeOfDay}); ISO 8601, default now", error: "at must be an ISO 8601 instant" })),
  rotation: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, description: "{Push={A|B|C}} index: 0 renders A (default), 1 B, ...", error: "rotation must be a non-negative integer" })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: "Seed for {a|b} and {Random}: the same seed renders the same variants (default: random)", error: "seed must be an integer 0 to 4294967295" })),
});

export const PushPreview = Type.Object({
  language: Type.String({ description: "The translation rendered" }),
  fallback: Type.Boolean({ description: "true when a language was asked for (or the device has one) and no translation matched it, so the default language was used" }),
  title: Type.String(),
  body: Type.String({ description: "As sent: empty when the translation has no body" }),
  icon_url: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  click_url: Nullable(Type.String({ description: "Rendered (macros and operators applied)" })),
});
