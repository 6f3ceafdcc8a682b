import type { ErrorObject } from "ajv";
import type { FieldError } from "../errors";

const CODES: Record<string, string> = {
  required: "REQUIRED_FIELD_MISSING",
  type: "INVALID_TYPE",
  enum: "INVALID_ENUM",
  const: "INVALID_ENUM",
  additionalProperties: "UNKNOWN_FIELD",
  format: "INVALID_FORMAT",
  pattern: "INVALID_FORMAT",
  minimum: "OUT_OF_RANGE",
  maximum: "OUT_OF_RANGE",
  exclusiveMinimum: "OUT_OF_RANGE",
  exclusiveMaximum: "OUT_OF_RANGE",
  minLength: "OUT_OF_RANGE",
  maxLength: "OUT_OF_RANGE",
  minItems: "OUT_OF_RANGE",
  maxItems: "OUT_OF_RANGE",
  minProperties: "OUT_OF_RANGE",
  maxProperties: "OUT_OF_RANGE",
};

/**
 * ajv's errors as the API's `errors[]`: the field as a dotted path under `prefix` (`config.team_id`),
 * or with `style: "pointer"` as a JSON Pointer (`/inputs/team_id`, RFC 6901 escapes), the house's
 * machine codes (REQUIRED_FIELD_MISSING, INVALID_TYPE, UNKNOWN_FIELD, …; INVALID_VALUE for the
 * rest) and ajv's message. A missing or unknown property is named as the field itself.
 */
export function jsonSchemaErrors(
  errors: readonly ErrorObject[] | null | undefined,
  prefix: string,
  style: "path" | "pointer" = "path",
): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors ?? []) {
    const path = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    const params = e.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
    if (e.keyword === "required" && params.missingProperty) path.push(params.missingProperty);
    if (e.keyword === "additionalProperties" && params.additionalProperty) path.push(params.additionalProperty);
    const field =
      style === "pointer"
        ? [prefix, ...path].map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("")
        : [prefix, ...path].join(".");
    const entry: FieldError = {
      field,
      code: CODES[e.keyword] ?? "INVALID_VALUE",
      message: e.message ?? "is not valid",
    };
    if (params.allowedValues) entry.expected = params.allowedValues.map((v) => JSON.stringify(v)).join(" | ");
    if (!out.some((o) => o.field === entry.field && o.code === entry.code)) out.push(entry);
    if (out.length >= 50) break;
  }
  return out;
}
