/**
 * @pushstack/templating: the operators and macros of push `title` and `body`.
 * compile() once (and validateTemplate() at the API), then render() per recipient, or bindSend()
 * once per send and BoundTemplate.render() per recipient. See README.md for the grammar.
 */
export { compile, validateTemplate, MAX_DEPTH } from "./parse";
export { render, bindSend, BoundTemplate } from "./render";
export type { RenderDevice, RenderApp, RenderSend } from "./render";
export type { Program } from "./ast";
export { TemplateError } from "./errors";
export { seededRng, fastRng } from "./rng";
export type { Rng } from "./rng";
export { SUPPORTED_LANGUAGES, resolveLanguage } from "./locale";
export { toClickUrl } from "./url";
