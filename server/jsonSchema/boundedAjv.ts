import { _, type Ajv, type KeywordCxt, type Options, type ValidateFunction } from "ajv";
import { RE2JS } from "re2js";
import { ValidationFailed } from "../errors";
import { processWide } from "../processWide";

/**
 * JSON Schema validation within bounds, for every schema whose patterns or data come from outside
 * (a prompt's `input_schema`, a connector action's `input_schema` and `configuration_schema`).
 * ajv compiles schemas to code that runs unbounded: `"pattern": "^(a+)+$"` backtracked for seconds
 * on 30 characters (ReDoS), `uniqueItems` compared every pair (16,000 objects: 27 s), and `$ref`s
 * whose `anyOf` branches refer twice to the next level double the work per level. Here:
 * - `pattern`, `patternProperties` (and so `propertyNames`) run on RE2 (re2js, pure JavaScript,
 *   linear time in the input); a pattern RE2 cannot run (a backreference, a lookahead) is refused
 *   when the schema is given, naming where it is (patternProblems);
 * - `uniqueItems` is linear: each item's canonical JSON goes into a set;
 * - every schema node applied to a value costs work (1, plus its keywords' entries, plus the
 *   value's size: elements, properties, and for a node with `pattern` or `format` the string's
 *   length / 16): at most MAX_VALIDATION_WORK units and MAX_VALIDATION_MS per validation; a
 *   recursion deeper than the stack is refused alike;
 * - `$ref`s are compiled as calls, never inlined (inlining let a 64 KiB schema generate code
 *   the size of its references times its definitions).
 * A validation over its bounds throws ValidationTooCostly; `boundedValidation` callers map it to
 * a 400 naming the field they validated.
 */

/** The most work units (schema nodes applied, their keywords' entries, the values' sizes) one validation may take. */
export const MAX_VALIDATION_WORK = 1_000_000;
/** The wall-clock deadline of one validation (milliseconds), checked between schema nodes; the work bound is usually reached first. */
export const MAX_VALIDATION_MS = 50;
/** Characters of a string that count as one unit of work for a node that matches a pattern or format on it. */
const CHARACTERS_PER_UNIT = 16;

const COST = "svc:cost";

/** Thrown when a validation exceeds MAX_VALIDATION_WORK, MAX_VALIDATION_MS or the stack. */
export class ValidationTooCostly extends Error {}

// not state of a request: set at the start of each (synchronous) validation. Kept process-wide so
// that a copy of this module (Next.js bundles its own) meters the ajv another copy built.
const meter = processWide("jsonSchema.meter", () => ({ left: 0, deadline: 0, ticks: 0, active: false }));

function spend(units: number): void {
  if (!meter.active) return;
  meter.left -= units;
  if (meter.left < 0)
    throw new ValidationTooCostly(`Checking the value takes more than ${MAX_VALIDATION_WORK} units of work.`);
  if (++meter.ticks % 256 === 0 && performance.now() > meter.deadline)
    throw new ValidationTooCostly(`Checking the value takes more than ${MAX_VALIDATION_MS} ms.`);
}

/** The cost of a schema node applied to `data`: the node's own, plus the value's elements or properties. */
function charge(node: number, data: unknown): void {
  let size = 0;
  if (Array.isArray(data)) size = data.length;
  else if (typeof data === "object" && data !== null) for (const _key in data) size++;
  spend(node + size);
}

/** The same for a node with `pattern` or `format`, whose strings are matched: their length counts too. */
function chargeWithStrings(node: number, data: unknown): void {
  if (typeof data === "string") spend(node + data.length / CHARACTERS_PER_UNIT);
  else charge(node, data);
}

/** JavaScript source of a JSON Schema `pattern` for RE2: ECMAScript syntax translated (named groups, `\u{…}`). */
function re2Pattern(pattern: string): RE2JS {
  return RE2JS.compile(RE2JS.translateRegExp(pattern));
}

/** ajv's `code.regExp`: RE2 for every `pattern` and `patternProperties` key (ajv passes its "u" flag; RE2 is always Unicode). */
const re2Engine = Object.assign(
  (pattern: string) => {
    const re = re2Pattern(pattern);
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  },
  // ajv reads it only when generating standalone code, which svc does not.
  { code: "re2js" },
);

/** The options every bounded ajv starts from: all errors, every format, no coercion, RE2, no inlined `$ref`. */
export function boundedAjvOptions(): Options {
  return { allErrors: true, strict: false, validateFormats: true, inlineRefs: false, code: { regExp: re2Engine } };
}

/** JSON with object keys sorted: equal for values JSON Schema's equality says are equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/** Adds svc's bounds to an ajv built with boundedAjvOptions(): linear `uniqueItems` and the work meter. */
export function boundAjv<A extends Ajv>(ajv: A): A {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    errors: true,
    validate: function uniqueItems(schema: boolean, data: unknown[]) {
      if (!schema) return true;
      const seen = new Map<string, number>();
      for (let i = 0; i < data.length; i++) {
        const key = canonical(data[i]);
        spend(1 + key.length / CHARACTERS_PER_UNIT);
        const j = seen.get(key);
        if (j !== undefined) {
          (uniqueItems as unknown as { errors: unknown[] }).errors = [
            {
              keyword: "uniqueItems",
              message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
              params: { i, j },
            },
          ];
          return false;
        }
        seen.set(key, i);
      }
      return true;
    },
  });
  // Generated inline (a `code` keyword): a `validate` keyword would build a context object per call,
  // which made metering cost 50 times the validation it meters.
  ajv.addKeyword({
    keyword: COST,
    schemaType: "object",
    code(cxt: KeywordCxt) {
      const { node, strings } = cxt.schema as { node: number; strings: boolean };
      const meterFn = cxt.gen.scopeValue("func", { ref: strings ? chargeWithStrings : charge });
      cxt.gen.code(_`${meterFn}(${node}, ${cxt.data})`);
    },
  });
  return ajv;
}

const SUBSCHEMA = [
  "additionalItems",
  "items",
  "contains",
  "additionalProperties",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
const SUBSCHEMA_LISTS = ["items", "prefixItems", "allOf", "anyOf", "oneOf"];
const SUBSCHEMA_MAPS = ["$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"];

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Visits every subschema object of `schema` (itself first), where JSON Schema's applicators place them. */
function eachSubschema(schema: Schema, visit: (node: Schema, path: string[]) => void, path: string[] = []): void {
  visit(schema, path);
  for (const key of SUBSCHEMA) if (isSchema(schema[key])) eachSubschema(schema[key] as Schema, visit, [...path, key]);
  for (const key of SUBSCHEMA_LISTS)
    if (Array.isArray(schema[key]))
      (schema[key] as unknown[]).forEach((s, i) => isSchema(s) && eachSubschema(s, visit, [...path, key, String(i)]));
  for (const key of SUBSCHEMA_MAPS)
    if (isSchema(schema[key]))
      for (const [name, s] of Object.entries(schema[key] as Schema))
        if (isSchema(s)) eachSubschema(s, visit, [...path, key, name]);
}

/** A copy of `schema` whose every subschema carries its cost (what ajv compiles; the caller's schema is not changed). */
export function withCosts(schema: Schema): Schema {
  const copy = structuredClone(schema);
  eachSubschema(copy, (node) => {
    let entries = 1;
    for (const [key, value] of Object.entries(node)) {
      if (Array.isArray(value)) entries += value.length;
      else if (isSchema(value) && (SUBSCHEMA_MAPS.includes(key) || key === "dependentRequired"))
        entries += Object.keys(value).length;
      else entries += 1;
    }
    node[COST] = { node: entries, strings: "pattern" in node || "format" in node };
  });
  return copy;
}

/**
 * Every `pattern` and `patternProperties` key of `schema` that RE2 cannot run, as
 * `{path, message}` (the path's segments under the schema: `properties.code.pattern`).
 */
export function patternProblems(schema: Schema): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const check = (pattern: string, path: string[]) => {
    try {
      re2Pattern(pattern);
    } catch (e) {
      problems.push({
        path: path.join("."),
        message: `svc matches patterns with RE2 (linear time), which cannot run this one: ${(e as Error).message}. Lookarounds and backreferences are not supported.`,
      });
    }
  };
  eachSubschema(schema, (node, path) => {
    if (typeof node.pattern === "string") check(node.pattern, [...path, "pattern"]);
    if (isSchema(node.patternProperties))
      for (const key of Object.keys(node.patternProperties)) check(key, [...path, "patternProperties", key]);
  });
  return problems;
}

/**
 * Compiles `schema` (with its costs) and answers a validate function that runs within the bounds
 * above, throwing ValidationTooCostly past them; its `errors` are ajv's.
 */
export function compileBounded(ajv: Ajv, schema: Schema): ValidateFunction {
  const compiled = ajv.compile(withCosts(schema));
  const validate = ((data: unknown) => {
    meter.left = MAX_VALIDATION_WORK;
    meter.deadline = performance.now() + MAX_VALIDATION_MS;
    meter.ticks = 0;
    meter.active = true;
    try {
      const ok = compiled(data) as boolean;
      validate.errors = compiled.errors;
      return ok;
    } catch (e) {
      if (e instanceof RangeError)
        throw new ValidationTooCostly("Checking the value recurses deeper than the stack allows.");
      throw e;
    } finally {
      meter.active = false;
    }
  }) as ValidateFunction;
  return validate;
}

/** The 400 for a validation over its bounds, naming the field that was being checked. */
export function validationTooCostly(field: string, e: ValidationTooCostly) {
  return ValidationFailed(
    [{ field, code: "OUT_OF_RANGE", message: `${e.message} Simplify the schema or send less.` }],
    "The value is too costly to check against its schema.",
  );
}
