import type { z } from "zod";
import { ValidationFailed, type FieldError } from "../errors";

/** Maps zod issues to the contract's field errors (field path, machine code, message). */
export function fieldErrors(error: z.ZodError, prefix?: string): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== undefined && p !== "").join(".");
    switch (issue.code) {
      case "unrecognized_keys":
        for (const key of issue.keys)
          out.push({
            field: path ? `${path}.${key}` : key,
            code: "UNKNOWN_FIELD",
            message: `Unknown field ${JSON.stringify(key)}.`,
          });
        break;
      case "invalid_type":
        if (issue.input === undefined)
          out.push({
            field: path || "body",
            code: "REQUIRED_FIELD_MISSING",
            message: `${path || "The body"} is required.`,
          });
        else
          out.push({
            field: path || "body",
            code: "INVALID_TYPE",
            message: issue.message,
            expected: String(issue.expected),
            received: describe(issue.input),
          });
        break;
      case "invalid_value":
        if (issue.input === undefined) {
          out.push({
            field: path,
            code: "REQUIRED_FIELD_MISSING",
            message: `${path} is required.`,
            expected: issue.values.map(String).join(" | "),
          });
          break;
        }
        out.push({
          field: path,
          code: "INVALID_ENUM",
          message: issue.message,
          expected: issue.values.map(String).join(" | "),
          received: shown(issue.input),
        });
        break;
      case "too_small":
      case "too_big":
        out.push({ field: path, code: "OUT_OF_RANGE", message: issue.message });
        break;
      case "invalid_format":
        out.push({
          field: path,
          code: "INVALID_FORMAT",
          message: issue.message,
          expected: issue.format === "regex" && issue.pattern ? `pattern ${issue.pattern}` : issue.format,
          ...(issue.input === undefined ? {} : { received: shown(issue.input) }),
        });
        break;
      case "invalid_union":
        out.push({ field: path, code: "INVALID_TYPE", message: issue.message });
        break;
      case "custom":
        out.push({
          field: path,
          code: (issue.params?.code as string | undefined) ?? "INVALID_VALUE",
          message: issue.message,
        });
        break;
      default:
        out.push({ field: path, code: "INVALID_VALUE", message: issue.message });
    }
  }
  return out;
}

const SHOWN_MAX = 100;

/**
 * The value a caller sent, as JSON, for errors where its type alone says nothing ("received":
 * "string" for a misspelt enum). Cut at 100 characters, on a code point boundary, so a large or
 * hostile value cannot inflate the problem.
 */
function shown(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? describe(value);
  } catch {
    return describe(value);
  }
  const points = Array.from(json);
  return points.length <= SHOWN_MAX ? json : `${points.slice(0, SHOWN_MAX - 1).join("")}…`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

const MAX_DEPTH = 64;
/** A UTF-16 surrogate without its pair: not a character, and not representable in UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string (a value or an object key) is refused, if it is. */
function badString(s: string): string | undefined {
  if (s.includes("\u0000")) return "NUL characters are not allowed.";
  if (LONE_SURROGATE.test(s))
    return "Lone UTF-16 surrogates (e.g. \\ud800 without its pair) are not allowed: send well-formed Unicode.";
  return undefined;
}

/**
 * Input no schema should ever see: a `__proto__` field name (copying the object would set its
 * prototype instead, so the field would vanish), NUL characters (PostgreSQL text refuses them; they have no
 * legitimate use here), lone surrogates and non-finite numbers (`1e999` parses to Infinity; RFC 8785
 * canonical JSON, which the request hash is computed from, has neither), and nesting deeper than
 * 64 levels (it would exhaust the stack of every recursive walk after it). Checked iteratively,
 * before anything recursive runs: whatever passes here can be hashed (requestHash never throws).
 */
export function refuseHostileInput(value: unknown, where: string): void {
  const stack: [unknown, string, number][] = [[value, where, 0]];
  const refuse = (field: string, message: string) => ValidationFailed([{ field, code: "INVALID_FORMAT", message }]);
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (depth > MAX_DEPTH)
      throw ValidationFailed([
        { field: where, code: "OUT_OF_RANGE", message: `The input is nested more than ${MAX_DEPTH} levels deep.` },
      ]);
    if (typeof v === "string") {
      const why = badString(v);
      if (why) throw refuse(path, why);
    } else if (typeof v === "number") {
      if (!Number.isFinite(v))
        throw ValidationFailed([{ field: path, code: "OUT_OF_RANGE", message: "Numbers must be finite." }]);
    } else if (typeof v === "bigint" || typeof v === "function" || typeof v === "symbol") {
      throw ValidationFailed([{ field: path, code: "INVALID_TYPE", message: "Only JSON values are accepted." }]);
    } else if (Array.isArray(v)) v.forEach((item, i) => stack.push([item, `${path}.${i}`, depth + 1]));
    else if (v && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        const why = badString(k);
        if (why) throw refuse(path, `In a field name: ${why}`);
        // Kept by JSON.parse but lost (it sets the prototype) when an object is copied: refused rather than silently dropped.
        if (k === "__proto__")
          throw ValidationFailed([
            {
              field: path === where ? k : `${path}.${k}`,
              code: "UNKNOWN_FIELD",
              message: "A field named __proto__ is not accepted: rename it.",
            },
          ]);
        stack.push([item, path === where ? k : `${path}.${k}`, depth + 1]);
      }
    }
  }
}

/** Parses `input` with `schema` or throws a 400 with field errors. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw ValidationFailed(fieldErrors(result.error, prefix));
  return result.data;
}
