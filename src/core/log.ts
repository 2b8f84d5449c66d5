/** Structured JSON logs, one object per line, to stdout (or a test sink). */
export type Level = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
  /** Whether a line at this level would be written: lets a hot path skip building its fields. */
  enabled(level: Exclude<Level, "silent">): boolean;
}

/**
 * Query parameters whose values are credentials: signatures of signed URLs (ours: `sig`;
 * S3's X-Amz-Signature / X-Amz-Credential / X-Amz-Security-Token), tokens, keys, codes, the console's one-time setup link.
 */
const SECRET_PARAM = /([?&#](?:[\w.-]*?(?:sig|signature|token|secret|key|code|password|credential|auth|setup)[\w.-]*)=)[^&#\s"'\\]+/gi;
/** `Bearer <token>` and `Basic <credentials>` in text (an error message quoting a header). */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;

/**
 * A log line without credentials: the values of secret-looking query parameters and of
 * Authorization schemes become "[redacted]". Lines without "=" or a scheme word (the access
 * log's) pass through untouched, at the cost of two substring checks.
 */
export function scrubSecrets(line: string): string {
  if (line.includes("=")) line = line.replace(SECRET_PARAM, "$1[redacted]");
  if (line.includes("Bearer") || line.includes("Basic")) line = line.replace(AUTH_SCHEME, "$1 [redacted]");
  return line;
}

export function createLogger(
  level: Level = "info",
  bindings: Record<string, unknown> = {},
  write: (line: string) => void = (l) => process.stdout.write(l + "\n"),
): Logger {
  const min = ORDER[level];
  const emit = (lvl: Exclude<Level, "silent">, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    write(scrubSecrets(JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...bindings, ...fields })));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (b) => createLogger(level, { ...bindings, ...b }, write),
    enabled: (lvl) => ORDER[lvl] >= min,
  };
}
