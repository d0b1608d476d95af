/**
 * The one error compile() throws. `position` is the 0-based offset (UTF-16 code units, so
 * `template.slice(position)` starts at the fault) of what is wrong; the message repeats it and quotes
 * the text around it, so an API can return it as a 400 as is.
 */
export class TemplateError extends Error {
  override name = "TemplateError";
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}
