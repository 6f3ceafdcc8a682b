import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { boundAjv, boundedAjvOptions, compileBounded, patternProblems, ValidationTooCostly } from "./boundedAjv";

function bounded<A extends Ajv>(ajv: A): A {
  (addFormats as unknown as (a: A) => A)(ajv);
  return boundAjv(ajv);
}
const ajv = bounded(new Ajv(boundedAjvOptions()));
const ajv2020 = bounded(new Ajv2020(boundedAjvOptions()));

/** Wall-clock time of `f` in ms. Bounds below are generous: the point is seconds versus milliseconds. */
function timed<T>(f: () => T): { ms: number; value: T } {
  const t = performance.now();
  const value = f();
  return { ms: performance.now() - t, value };
}

// Before: 12 s for 31 characters against ^(a+)+$, 27 s for uniqueItems over 16,000 objects.
const SLOW = 2000;

describe("bounded JSON Schema validation", () => {
  it("matches a pattern that backtracks (^(a+)+$) in linear time", () => {
    const validate = compileBounded(ajv, { type: "string", pattern: "^(a+)+$" });
    const short = timed(() => validate(`${"a".repeat(30)}!`));
    expect(short.value).toBe(false);
    const long = timed(() => validate(`${"a".repeat(5000)}!`));
    expect(long.value).toBe(false);
    expect(validate("aaaa")).toBe(true);
    expect(short.ms + long.ms).toBeLessThan(SLOW);
  });

  it("does the same for patternProperties and propertyNames", () => {
    const key = `${"a".repeat(5000)}!`;
    const pp = compileBounded(ajv, { type: "object", patternProperties: { "^(a+)+$": { type: "number" } } });
    const pn = compileBounded(ajv, { type: "object", propertyNames: { pattern: "^(a+)+$" } });
    const t = timed(() => [pp({ [key]: "x" }), pn({ [key]: 1 })]);
    expect(t.value).toEqual([true, false]);
    expect(pp({ aaa: "x" })).toBe(false);
    expect(t.ms).toBeLessThan(SLOW);
  });

  it("keeps JavaScript pattern syntax RE2 can run, and names the patterns it cannot", () => {
    const validate = compileBounded(ajv2020, { type: "string", pattern: "^(?<word>\\w+)\\u00e9$" });
    expect(validate("cafe\u0301")).toBe(false);
    expect(validate("caf\u00e9")).toBe(true);
    expect(
      patternProblems({
        properties: { a: { pattern: "(?=x)y" }, b: { items: { pattern: "(a)\\1" } } },
        patternProperties: { "^(?!x)": {} },
      }).map((p) => p.path),
    ).toEqual(["patternProperties.^(?!x)", "properties.a.pattern", "properties.b.items.pattern"]);
  });

  it("checks uniqueItems in linear time, reporting a duplicate as ajv does", () => {
    const validate = compileBounded(ajv, { type: "array", uniqueItems: true });
    const items = Array.from({ length: 16_000 }, (_, i) => ({ id: i, name: `n${i}`, tags: [i] }));
    // Answered either way within the bounds: true, or over the work bound on a loaded machine.
    const distinct = timed(() => {
      try {
        return validate(items);
      } catch (e) {
        return e;
      }
    });
    expect([true, "ValidationTooCostly"]).toContain(
      distinct.value === true ? true : (distinct.value as Error).constructor.name,
    );
    expect(distinct.ms).toBeLessThan(SLOW);
    expect(validate(items.slice(0, 200))).toBe(true);
    expect(validate([{ a: 1, b: [2] }, 3, { b: [2], a: 1 }])).toBe(false);
    expect(validate.errors).toEqual([
      expect.objectContaining({ keyword: "uniqueItems", instancePath: "", params: { i: 2, j: 0 } }),
    ]);
    expect(validate([1, "1", [1], { a: 1 }, { a: "1" }])).toBe(true);
  });

  it("stops a schema whose $refs double the work per level, and one that recurses in place", () => {
    const defs: Record<string, unknown> = { l30: { type: "string" } };
    for (let i = 0; i < 30; i++)
      defs[`l${i}`] = { anyOf: [{ $ref: `#/definitions/l${i + 1}` }, { $ref: `#/definitions/l${i + 1}` }] };
    const exponential = compileBounded(ajv, { definitions: defs, $ref: "#/definitions/l0" });
    const t = timed(() => {
      try {
        return exponential(1);
      } catch (e) {
        return e;
      }
    });
    expect(t.value).toBeInstanceOf(ValidationTooCostly);
    expect(t.ms).toBeLessThan(SLOW);

    const inPlace = compileBounded(ajv, { $id: "https://x.example/s", allOf: [{ $ref: "#" }] });
    expect(() => inPlace({})).toThrow(ValidationTooCostly);
  });

  it("counts the size of what it checks: a huge array against many alternatives", () => {
    const validate = compileBounded(ajv, {
      type: "array",
      items: { anyOf: Array.from({ length: 50 }, (_, i) => ({ const: `v${i}` })) },
    });
    const t = timed(() => {
      try {
        return validate(Array.from({ length: 100_000 }, () => "x"));
      } catch (e) {
        return e;
      }
    });
    expect(t.value).toBeInstanceOf(ValidationTooCostly);
    expect(t.ms).toBeLessThan(SLOW);
    // Ordinary inputs are far within the bounds.
    expect(validate(["v1", "v2"])).toBe(true);
  });
});
