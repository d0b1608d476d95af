import { describe, expect, test } from "bun:test";
import { compile, MAX_DEPTH, TemplateError, validateTemplate } from "./index";

/** Asserts the template is refused, at `position`, with a message matching `what` that names the position. */
function refused(template: string, what: RegExp, position: number) {
  const v = validateTemplate(template);
  if (v.ok) throw new Error(`accepted: ${template}`);
  expect(v.error).toMatch(what);
  expect(v.position).toBe(position);
  expect(v.error).toContain(`at position ${position}`);
}

describe("validation errors name what is wrong and where", () => {
  const cases: [string, RegExp, number][] = [
    // balance
    ["Hi {a|b", /'\{' is never closed.*write \\\{ for a literal brace/, 3],
    ["Hi a}", /unmatched '\}'.*write \\\}/, 4],
    ["{Upper:x", /never closed/, 0],
    ["{Date:DD", /never closed/, 0],
    ["{Push={A|B}", /never closed/, 0],
    ["{{app_name}", /unknown operator "app_name".*did you mean the macro \{\{app_name\}\}/, 1],
    // operator names
    ["ok {Foo}", /unknown operator "Foo".*known operators: \{a\|b\|c\}/, 3],
    ["{upper:x}", /unknown operator "upper".*did you mean \{Upper:text\}\?/, 0],
    ["{Randm=[1,2]}", /did you mean \{Random=\[min,max\]\}/, 0],
    ["{app_name}", /unknown operator "app_name".*did you mean the macro \{\{app_name\}\}/, 0],
    ["{TimeOfDay }", /malformed \{TimeOfDay\.\.\.\}.*write \{TimeOfDay\}/, 0],
    ["{Date DD}", /malformed \{Date\.\.\.\}.*write \{Date:FORMAT\}/, 0],
    ["{x}", /unknown operator "x"/, 0],
    ["{ }", /a choice with one variant.*\{a\|b\}/, 0],
    ["{}", /empty braces/, 0],
    ["{{a}}", /unknown macro "\{\{a\}\}"/, 0],
    // arguments
    ["{Random=[5,1]}", /Random min 5 is greater than max 1/, 9],
    ["{Random=[a,1]}", /expected an integer/, 9],
    ["{Random=[1 2]}", /expected ','/, 11],
    ["{Random=[1,2}", /expected '\]'/, 12],
    ["{Random=1,2}", /expected '\['.*\{Random=\[min,max\]\}/, 8],
    ["{Random=[1,2]x}", /expected '\}'/, 13],
    ["{Random=[1.5,2]}", /whole numbers/, 9],
    ["{Random=[1,9999999999999999]}", /at most 15 digits/, 11],
    ["{Date:}", /empty Date format/, 0],
    ["{Date:DD{a|b}}", /'\{' inside a Date format/, 8],
    ["{Weekday:long}", /unknown Weekday option.*\{Weekday:short\}/, 9],
    ["{Push=A|B}", /expected '\{' after 'Push='/, 6],
    ["{Push={A}}", /\{Push=\{\.\.\.\}\} with one variant/, 6],
    ["{Push={A|{Push={B|C}}}}", /cannot be nested inside another \{Push=/, 9],
    ["{Upper:}", /empty \{Upper:\} text/, 0],
    ["{Lower:}", /empty \{Lower:\} text/, 0],
    // macros
    ["Hi {{app_nam}}", /unknown macro "\{\{app_nam\}\}".*did you mean \{\{app_name\}\}/, 3],
    ["{{tagg:vip}}", /did you mean \{\{tag:key\}\}/, 0],
    ["{{colour}}", /known macros: \{\{app_name\}\}.*\{\{tag:key\}\}/, 0],
    ["{{tag}}", /\{\{tag\}\} without a key.*\{\{tag:KEY\}\}/, 5],
    ["{{tag:  }}", /without a key/, 6],
    ["{{app_name:x}}", /takes no ':' argument/, 10],
  ];
  for (const [template, what, position] of cases) test(JSON.stringify(template), () => refused(template, what, position));

  test("the message quotes the text at the fault", () => {
    const v = validateTemplate("Hello {{first_name}}, welcome");
    expect(v).toMatchObject({ ok: false, position: 6 });
    expect(!v.ok && v.error).toContain('(near "{{first_name}}, welcome")');
  });

  test("compile throws a TemplateError carrying the position", () => {
    try {
      compile("abc {Nope}");
      throw new Error("not refused");
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      expect((e as TemplateError).position).toBe(4);
    }
  });

  test("a non-string is refused, not crashed on", () => {
    expect(validateTemplate(42 as unknown as string)).toMatchObject({ ok: false, position: 0 });
    expect(() => compile(null as unknown as string)).toThrow(TemplateError);
  });
});

describe("accepted syntax", () => {
  const ok = [
    "plain text, no operators",
    "",
    "{Push={A|B}}",
    "{a|b|c} {Random=[1,10]} {Random=[ -5 , +5 ]} {Random=[7,7]} {TimeOfDay}",
    "{Date:DD.MM.YYYY} {Date:YY} {Weekday} {Weekday:short}",
    "{Upper:hi {a|b}} {Lower:{{app_name}}}",
    "{{ app_name }} {{tag:vip level}} {{ tag : x }}",
    "\\{literal\\} \\| \\\\ C:\\path a|b",
    "{a||}", // empty variants are allowed (a choice may print nothing)
    "{{a|b}|c}", // a nested choice first, not a macro
  ];
  for (const t of ok) test(JSON.stringify(t), () => expect(validateTemplate(t)).toEqual({ ok: true }));
});

describe("hostile input", () => {
  test(`nesting is capped at ${MAX_DEPTH} levels with a clear error`, () => {
    const deep = (n: number) => "{a|".repeat(n) + "x" + "}".repeat(n);
    expect(validateTemplate(deep(MAX_DEPTH))).toEqual({ ok: true });
    refused(deep(MAX_DEPTH + 1), /nested more than 16 deep/, 3 * MAX_DEPTH);
    refused("{".repeat(2000), /nested more than 16 deep/, MAX_DEPTH);
    refused("{Upper:".repeat(40) + "x" + "}".repeat(40), /nested more than 16 deep/, 7 * MAX_DEPTH);
  });

  // A generous bound that only an algorithmic blow-up (quadratic or worse) can exceed: 200,000
  // characters of each pattern; quadratic work on them would take minutes. Benchmarks print the
  // real figures (bench/templating.ts).
  test("compile is linear on 200,000-character adversarial inputs", () => {
    const n = 200_000;
    const patterns = [
      "{".repeat(n),
      "}".repeat(n),
      "{{ ".repeat(n / 3),
      "{{tag:" + "a".repeat(n),
      "{{a}".repeat(n / 4),
      "{a|b}".repeat(n / 5),
      "\\{".repeat(n / 2),
      "{Date:" + "D".repeat(n) + "}",
      "{Upper:" + "x|".repeat(n / 2) + "}",
      "{a|" + "{{ app_name }}|".repeat(n / 16) + "}",
    ];
    const t0 = performance.now();
    for (const p of patterns) validateTemplate(p);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
