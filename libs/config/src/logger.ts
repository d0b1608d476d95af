/**
 * Structured logs: one JSON object per line on stdout, with a level, a message and fields
 * (request id, app, ...). Secrets are never passed in; `err` fields carry message and stack only.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function serialise(v: unknown): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack };
  return v;
}

export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stdout.write(l + "\n")): Logger {
  const min = ORDER[level];
  const log = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const rec: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base };
    if (fields) for (const k in fields) rec[k] = serialise(fields[k]);
    write(JSON.stringify(rec));
  };
  return {
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** For tests: discards everything below error. */
export const silentLogger: Logger = createLogger("error", {}, () => {});
