/**
 * zod emits JSON Schema (draft 2020-12 keywords even for its `openapi-3.0` target: `$id`,
 * `examples`, `const`, `propertyNames`, numeric `exclusiveMinimum`), and OpenAPI 3.0.3's Schema
 * Object is a strict subset with its own spelling. Strict validators (swagger-parser, and the code
 * generators built on it) reject anything else, so every schema goes through this one conversion.
 */
type Json = Record<string, unknown>;

const KEYWORDS = new Set([
  "$ref",
  "title",
  "description",
  "type",
  "format",
  "nullable",
  "enum",
  "default",
  "example",
  "deprecated",
  "readOnly",
  "writeOnly",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxProperties",
  "minProperties",
  "required",
  "items",
  "properties",
  "additionalProperties",
  "allOf",
  "oneOf",
  "anyOf",
  "not",
  "discriminator",
  "xml",
  "externalDocs",
]);

export function toSchema30(input: unknown): Json {
  if (!input || typeof input !== "object" || Array.isArray(input)) return {};
  const schema = input as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-")) out[key] = value;
    else if (key === "examples" && Array.isArray(value) && value.length > 0 && !("example" in schema))
      out.example = value[0];
    else if (key === "const") out.enum = [value];
    else if (!KEYWORDS.has(key)) continue;
    else if (key === "properties")
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, toSchema30(sub)]));
    else if (key === "items" || key === "not") out[key] = toSchema30(value);
    else if (key === "additionalProperties") out[key] = typeof value === "boolean" ? value : toSchema30(value);
    else if (key === "allOf" || key === "oneOf" || key === "anyOf") out[key] = (value as unknown[]).map(toSchema30);
    else if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "number") {
      out[key === "exclusiveMinimum" ? "minimum" : "maximum"] = value;
      out[key] = true;
    } else out[key] = value;
  }
  // `nullable` does not widen an `enum`: generic validators (ajv, Prism) check the enum on its own,
  // so a nullable enum lists null among its values.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...(out.enum as unknown[]), null];
  // A $ref stands alone in 3.0 (siblings are ignored): keep a description or nullable beside it through allOf.
  if (typeof out.$ref === "string" && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    return { allOf: [{ $ref }], ...rest };
  }
  return out;
}
