import type { z } from "zod";
import { ValidationFailed, type FieldError } from "../errors";

/** Maps zod issues to the contract's field errors (field path, machine code, message). */
export function fieldErrors(error: z.ZodError, prefix?: string): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== undefined && p !== "").join(".");
    switch (issue.code) {
      case "unrecognized_keys":
        for (const key of issue.keys) out.push({ field: path ? `${path}.${key}` : key, code: "UNKNOWN_FIELD", message: `Unknown field ${JSON.stringify(key)}.` });
        break;
      case "invalid_type":
        if (issue.input === undefined) out.push({ field: path || "body", code: "REQUIRED_FIELD_MISSING", message: `${path || "The body"} is required.` });
        else out.push({ field: path || "body", code: "INVALID_TYPE", message: issue.message, expected: String(issue.expected), received: describe(issue.input) });
        break;
      case "invalid_value":
        if (issue.input === undefined) {
          out.push({ field: path, code: "REQUIRED_FIELD_MISSING", message: `${path} is required.`, expected: issue.values.map(String).join(" | ") });
          break;
        }
        out.push({ field: path, code: "INVALID_ENUM", message: issue.message, expected: issue.values.map(String).join(" | "), received: describe(issue.input) });
        break;
      case "too_small":
      case "too_big":
        out.push({ field: path, code: "OUT_OF_RANGE", message: issue.message });
        break;
      case "invalid_format":
        out.push({ field: path, code: "INVALID_FORMAT", message: issue.message });
        break;
      case "invalid_union":
        out.push({ field: path, code: "INVALID_TYPE", message: issue.message });
        break;
      case "custom":
        out.push({ field: path, code: (issue.params?.code as string | undefined) ?? "INVALID_VALUE", message: issue.message });
        break;
      default:
        out.push({ field: path, code: "INVALID_VALUE", message: issue.message });
    }
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Parses `input` with `schema` or throws a 400 with field errors. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw ValidationFailed(fieldErrors(result.error, prefix));
  return result.data;
}
