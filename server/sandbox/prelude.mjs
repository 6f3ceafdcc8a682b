// The guest-side half of the bridge: the only script, besides the bundle, that runs inside a
// sandbox. It is evaluated before the bundle, so everything it captures (JSON, String, the string
// methods it cuts with, the two host functions) is the original, whatever the bundle later does to
// its own globals and prototypes. The host checks the sizes again (pool.ts): this only keeps
// honest bundles' telemetry tidy.

/** Largest JSON (in characters) that crosses the boundary in one piece: bridge arguments, results. */
export const MAX_JSON_CHARS = 4 * 1024 * 1024;
/** A run's log is telemetry, not storage: lines are cut to this length and counted. */
export const LOG_LINE_CHARS = 2048;
export const LOG_MAX_LINES = 200;
export const PROGRESS_MESSAGE_CHARS = 500;

/**
 * The prelude's source. The host sets `__svcCall(name, json) → Promise<json>` and
 * `__svcNotify(kind, ...values)` on the global object; the prelude removes them, so the bundle can
 * only reach the host through the frozen `ctx` it is given. Returns `{ctx, parse, finish}`.
 * @param {string[]} entries dotted names of the registered bridge entries (`events.emit`)
 */
export function preludeSource(entries) {
  return `(() => {
  "use strict";
  const g = globalThis;
  const call = g.__svcCall, notify = g.__svcNotify;
  delete g.__svcCall; delete g.__svcNotify;
  const { parse, stringify } = JSON;
  const { isInteger } = Number;
  const { freeze, keys } = Object;
  const Str = String, WS = WeakSet, Err = Error, isError = (v) => v instanceof Err;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const slice = uncurry(String.prototype.slice);
  const wsHas = uncurry(WeakSet.prototype.has), wsAdd = uncurry(WeakSet.prototype.add);
  const MAX_JSON = ${MAX_JSON_CHARS}, LINE = ${LOG_LINE_CHARS}, LINES = ${LOG_MAX_LINES}, MESSAGE = ${PROGRESS_MESSAGE_CHARS};

  const encode = (what, value) => {
    const json = stringify(value);
    if (json !== undefined && json.length > MAX_JSON) throw new RangeError(what + " is larger than " + MAX_JSON + " characters of JSON");
    return json === undefined ? "null" : json;
  };
  // Logging must never throw at the guest: cycles, BigInt, functions and hostile toJSON all print.
  const show = (v) => {
    if (typeof v === "string") return v;
    try {
      if (isError(v)) return v.stack ? Str(v) + "\\n" + v.stack : Str(v);
      const seen = new WS();
      const s = stringify(v, (k, x) => {
        if (typeof x === "bigint") return Str(x) + "n";
        if (typeof x === "function") return "[Function]";
        if (typeof x === "symbol") return Str(x);
        if (typeof x === "object" && x !== null) { if (wsHas(seen, x)) return "[Circular]"; wsAdd(seen, x); }
        return x;
      });
      return s === undefined ? Str(v) : s;
    } catch { try { return Str(v); } catch { return "[unprintable]"; } }
  };
  let lines = 0;
  const log = (level, args) => {
    if (lines > LINES) return;
    lines += 1;
    if (lines > LINES) { notify("log", "[log truncated: more than " + LINES + " lines]", "warn"); return; }
    let line = "";
    for (let i = 0; i < args.length && line.length <= LINE; i++) {
      const part = show(args[i]);
      line += (i ? " " : "") + (typeof part === "string" ? part : "[unprintable]");
    }
    notify("log", line.length > LINE ? slice(line, 0, LINE - 1) + "…" : line, level);
  };

  const deepFreeze = (o) => { for (const k of keys(o)) if (typeof o[k] === "object") deepFreeze(o[k]); return freeze(o); };
  const ctx = {};
  for (const path of ${JSON.stringify(entries)}) {
    const parts = path.split(".");
    let o = ctx;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {});
    o[parts[parts.length - 1]] = async (...args) => parse(await call(path, encode("The arguments of ctx." + path, args)));
  }
  ctx.progress = async (percent, message) => {
    if (!isInteger(percent) || percent < 0 || percent > 100) throw new TypeError("ctx.progress: percent must be an integer from 0 to 100");
    if (message !== undefined && message !== null && typeof message !== "string") throw new TypeError("ctx.progress: message must be a string");
    notify("progress", percent, typeof message === "string" ? slice(message, 0, MESSAGE) : undefined);
  };
  ctx.log = (...args) => log("info", args);
  // Libraries log through console; it writes to the same capped log and nowhere else.
  g.console = freeze({
    log: (...a) => log("info", a), info: (...a) => log("info", a), debug: (...a) => log("debug", a),
    warn: (...a) => log("warn", a), error: (...a) => log("error", a),
  });
  return freeze({ ctx: deepFreeze(ctx), parse, finish: (value) => encode("The result", value) });
})()`;
}
