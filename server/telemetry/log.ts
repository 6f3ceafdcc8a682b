import { AsyncLocalStorage } from "node:async_hooks";
import { isSpanContextValid, trace } from "@opentelemetry/api";
import pino, { type DestinationStream, type Level, type Logger } from "pino";
import pretty from "pino-pretty";
import { processWide } from "../processWide";

/**
 * The process's one logger (pino): JSON lines for a log pipeline, or human-readable lines when a
 * person watches a terminal. Every line written while a governed call runs carries that call's
 * request id, operation and organization, and the active trace's id when tracing is on (the
 * OpenTelemetry API answers nothing otherwise), so a line leads to its trace and its provenance
 * record (`request_id`).
 *
 * What never reaches a line: request and response bodies, the Authorization header, tokens and
 * secrets. Nothing here logs them; `redact` below is a second belt for a field someone adds later.
 */

export type LogFormat = "json" | "pretty";
export type LogLevel = Level | "silent";
const LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
  /** 1 (stdout, the server) or 2 (stderr, the CLI: its stdout is the command's answer). */
  fd: 1 | 2;
}

/** SVC_LOG_LEVEL (default info) and SVC_LOG_FORMAT (default: pretty on a terminal, JSON otherwise). */
export function logSettings(env: Record<string, string | undefined> = process.env, fd: 1 | 2 = 1): LogSettings {
  const level = (env.SVC_LOG_LEVEL || "info").toLowerCase() as LogLevel;
  if (!LEVELS.includes(level))
    throw new Error(`SVC_LOG_LEVEL must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(env.SVC_LOG_LEVEL)}`);
  const raw = (env.SVC_LOG_FORMAT || "").toLowerCase();
  if (raw !== "" && raw !== "json" && raw !== "pretty")
    throw new Error(`SVC_LOG_FORMAT must be json or pretty, got ${JSON.stringify(env.SVC_LOG_FORMAT)}`);
  const tty = (fd === 1 ? process.stdout : process.stderr).isTTY === true;
  return { level, format: raw === "" ? (tty ? "pretty" : "json") : raw, fd };
}

/**
 * Field names a secret could hide under, at the top level, and the headers of a request. No
 * wildcard (`*.token`): pino's redaction of wildcard paths cost ~5x the rest of a line.
 */
const SECRET_FIELDS = [
  "authorization",
  "cookie",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "client_secret",
  "secret",
  "password",
  "api_key",
];
const REDACT = [
  ...SECRET_FIELDS,
  'headers["authorization"]',
  'headers["cookie"]',
  'req.headers["authorization"]',
  'req.headers["cookie"]',
];

/** Fields of the call under way, shown on every line logged inside it. */
interface CallFields {
  request_id: string;
  operation: string;
  org_did?: string;
}

const state = processWide("telemetry.log", () => ({
  logger: undefined as Logger | undefined,
  fd: 1 as 1 | 2,
  calls: new AsyncLocalStorage<CallFields>(),
}));

/** The fields the lines of the current call (and trace) carry. */
function contextFields(): object {
  const call = state.calls.getStore();
  const span = trace.getActiveSpan()?.spanContext();
  if (!span || !isSpanContextValid(span)) return call ?? {};
  return { ...call, trace_id: span.traceId, span_id: span.spanId };
}

// What the pretty format keeps out of the indented field list below each line (shown inline, or
// already in the message: the start-up lines).
const INLINE =
  "pid,hostname,component,request_id,trace_id,span_id,org_did,operation,status,duration_ms,url,engine,worker,setup_link";

function destination(settings: LogSettings): DestinationStream {
  if (settings.format === "json") return pino.destination({ fd: settings.fd, sync: true });
  // In this thread and synchronous (no transport worker): nothing is lost when the process exits.
  return pretty({
    destination: settings.fd,
    sync: true,
    colorize: (settings.fd === 1 ? process.stdout : process.stderr).isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: INLINE,
    messageFormat: (line, key) => {
      const component = typeof line.component === "string" ? `${line.component}: ` : "";
      const request = typeof line.request_id === "string" ? `  (${line.request_id})` : "";
      return `${component}${String(line[key] ?? "")}${request}`;
    },
  });
}

/** Builds a logger with `settings` (tests; the process's own is `logger()`). */
export function createLogger(settings: LogSettings, dest: DestinationStream = destination(settings)): Logger {
  return pino(
    {
      level: settings.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: contextFields,
      redact: { paths: REDACT, censor: "[redacted]" },
    },
    dest,
  );
}

/** The process's logger, built from SVC_LOG_LEVEL / SVC_LOG_FORMAT on first use. */
export function logger(): Logger {
  state.logger ??= createLogger(logSettings(process.env, state.fd));
  return state.logger;
}

/** A component's logger (`svc`, `svc-worker`, `svc-jobs`…): its name on every line. */
export function componentLog(component: string): Logger {
  return logger().child({ component });
}

/** A `(line) => void` for code that reports plain lines (set-up, the job worker), at info. */
export function lineLog(component: string, level: "info" | "warn" | "error" = "info"): (line: string) => void {
  const log = componentLog(component);
  return (line) => log[level](line);
}

/** Replaces the process's logger (tests capture lines); returns the one it replaced. */
export function replaceLogger(next: Logger | undefined): Logger | undefined {
  const previous = state.logger;
  state.logger = next;
  return previous;
}

/** The command line: its stdout is the command's answer, so logs go to stderr. Call before logging. */
export function logToStderr(): void {
  state.fd = 2;
  state.logger = undefined;
}

/**
 * Runs one governed call with its fields on every line logged inside it, then logs the call
 * itself: operation, status, duration, organization. Never its body nor its credentials. One
 * line per call at info (warn for a 5xx): it is the access log a log pipeline expects, and the
 * link from a trace to the provenance record (`request_id`); SVC_LOG_LEVEL=warn leaves it out.
 */
export async function loggedCall<T extends { status: number }>(
  fields: { request_id: string; operation: string },
  run: (caller: (orgDid: string) => void) => Promise<T>,
  statusOfError: (error: unknown) => number,
): Promise<T> {
  const call: CallFields = { ...fields };
  const started = performance.now();
  let status = 500;
  try {
    const out = await state.calls.run(call, () => run((orgDid) => (call.org_did = orgDid)));
    status = out.status;
    return out;
  } catch (e) {
    status = statusOfError(e);
    throw e;
  } finally {
    const log = logger();
    const level = status >= 500 ? "warn" : "info";
    if (log.isLevelEnabled(level)) {
      const duration_ms = Math.round((performance.now() - started) * 10) / 10;
      // The call's own fields, given here: the mixin no longer sees them outside `run`.
      log[level]({ ...call, status, duration_ms }, `${call.operation} ${status} ${duration_ms} ms`);
    }
  }
}

/**
 * Whether a line of svc's output (JSON or pretty) is `component`'s `message`: for the tests and
 * benchmarks that wait for a process to say it is ready.
 */
export function logLineSays(line: string, component: string, message: string): boolean {
  if (line.includes(`${component}: ${message}`)) return true;
  try {
    const parsed = JSON.parse(line) as { component?: unknown; msg?: unknown };
    return parsed.component === component && parsed.msg === message;
  } catch {
    return false;
  }
}
