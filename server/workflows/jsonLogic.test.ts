import jsonLogic from "json-logic-js";
import { describe, expect, it } from "vitest";
import {
  applyLogic,
  LogicLimitExceeded,
  LogicRuleInvalid,
  MAX_LOGIC_DEPTH,
  MAX_LOGIC_RULE_NODES,
  MAX_LOGIC_VALUE_SIZE,
  ruleProblem,
} from "./jsonLogic";

const data = {
  input: { n: 3, s: "abc", list: [1, 2, 3, 4], names: ["a", "b"], flag: true, empty: [], nested: { x: { y: 7 } } },
  nodes: { check: { output: { ok: true, score: 0.75, tags: ["x", "y"] } } },
};

/** Rules whose answers must be json-logic-js's (the evaluator keeps its semantics). */
const SAME_AS_JSON_LOGIC_JS: unknown[] = [
  { "==": [{ var: "nodes.check.output.ok" }, true] },
  { "==": [1, "1"] },
  { "==": [[1, 2], "1,2"] },
  { "!=": [{ var: "input.n" }, 3] },
  { "===": [1, 1] },
  { "!==": [1, "1"] },
  { ">": [{ var: "input.n" }, 2] },
  { ">=": ["b", "a"] },
  { "<": [1, { var: "input.n" }, 5] },
  { "<=": [1, 1, 0] },
  { "!!": [[]] },
  { "!": [{ var: "input.empty" }] },
  { "%": [10, 3] },
  { in: ["b", { var: "input.s" }] },
  { in: [3, { var: "input.list" }] },
  { cat: ["x", 1, null, [1, [2, 3]], true] },
  { substr: ["abcdef", 1, -2] },
  { substr: ["abcdef", -3] },
  { "+": [1, "2", [3]] },
  { "*": [2, "3", 4] },
  { "*": ["2"] },
  { "-": [5] },
  { "-": [5, 2] },
  { "/": [1, 4] },
  { min: [3, 1, "2"] },
  { max: [] },
  { merge: [1, [2, 3], [[4]]] },
  { var: ["input.missing", "fallback"] },
  { var: "input.list.1" },
  { var: "input.list.length" },
  { var: "" },
  { missing: ["input.n", "input.nope"] },
  { missing_some: [1, ["input.n", "input.nope"]] },
  { if: [{ var: "input.flag" }, "yes", "no"] },
  { if: [false, 1, false, 2, 3] },
  { if: [false, 1] },
  { "?:": [true, 1, 2] },
  { and: [true, 0, 1] },
  { or: [0, "", "x"] },
  { filter: [{ var: "input.list" }, { ">": [{ var: "" }, 2] }] },
  { map: [{ var: "input.list" }, { "*": [{ var: "" }, 2] }] },
  { reduce: [{ var: "input.list" }, { "+": [{ var: "current" }, { var: "accumulator" }] }, 0] },
  { all: [{ var: "input.list" }, { ">": [{ var: "" }, 0] }] },
  { all: [[], true] },
  { some: [{ var: "input.names" }, { "==": [{ var: "" }, "b"] }] },
  { none: [{ var: "input.list" }, { ">": [{ var: "" }, 9] }] },
  { none: [[], true] },
  [1, { var: "input.n" }],
  { a: 1, b: { var: "x" } },
  "text",
  42,
  null,
];

describe("the bounded JSON Logic evaluator", () => {
  it("answers what json-logic-js answers on ordinary rules", () => {
    for (const rule of SAME_AS_JSON_LOGIC_JS)
      expect(applyLogic(rule, data), JSON.stringify(rule)).toEqual(jsonLogic.apply(rule as jsonLogic.RulesLogic, data));
  });

  it("stops a reduce that doubles an array (the heap exhaustion) at the size bound, quickly", () => {
    const doubling = (n: number) => ({
      reduce: [
        Array.from({ length: n }, (_, i) => i),
        { merge: [{ var: "accumulator" }, { var: "accumulator" }] },
        [1],
      ],
    });
    const started = performance.now();
    expect(() => applyLogic(doubling(26), {})).toThrow(LogicLimitExceeded);
    expect(() => applyLogic(doubling(20), {})).toThrow(LogicLimitExceeded);
    expect(() => applyLogic(doubling(200), {})).toThrow(/elements or characters/);
    // Generous for a loaded machine; the bound itself is ~1 ms of work here.
    expect(performance.now() - started).toBeLessThan(1000);
    // A small doubling still answers.
    expect((applyLogic(doubling(3), {}) as unknown[]).length).toBe(8);
  });

  it("bounds strings built from arrays, and the work of nested loops", () => {
    const big = Array.from({ length: 20_000 }, () => "xxxxxxxxxx");
    expect(() => applyLogic({ cat: [{ var: "big" }] }, { big })).toThrow(LogicLimitExceeded);
    expect(() => applyLogic({ "==": [{ var: "big" }, "x"] }, { big })).toThrow(LogicLimitExceeded);
    const list = Array.from({ length: 1000 }, (_, i) => i);
    const nested = { map: [{ var: "l" }, { map: [{ var: "" }, 1] }] };
    expect(applyLogic(nested, { l: list.slice(0, 10) })).toEqual(Array(10).fill([]));
    const quadratic = { some: [{ var: "l" }, { some: [{ var: "" }, { "===": [{ var: "" }, -1] }] }] };
    // 1000 × 1000 comparisons: over the work bound.
    expect(() => applyLogic(quadratic, { l: list.map(() => list) })).toThrow(LogicLimitExceeded);
  });

  it("refuses log and unknown operations, and never walks a prototype", () => {
    expect(ruleProblem({ log: { var: "nodes" } })).toMatch(/Unknown JSON Logic operation "log"/);
    expect(() => applyLogic({ log: "x" }, {})).toThrow(LogicRuleInvalid);
    expect(ruleProblem({ "==": [1, { "toString.call": [] }] })).toMatch(/Unknown/);
    expect(ruleProblem({ and: [true, { method: [{ var: "input" }, "toString"] }] })).toMatch(/"method"/);
    expect(applyLogic({ var: "input.constructor.name" }, { input: {} })).toBeNull();
    expect(applyLogic({ var: "input.__proto__" }, { input: {} })).toBeNull();
    expect(applyLogic({ var: "input.s.length" }, { input: { s: "abc" } })).toBeNull();
    // A constant object's values are data, never evaluated: its keys are not operations.
    expect(ruleProblem({ a: { log: 1 }, b: 2 })).toBeUndefined();
  });

  it("refuses rules over the node and depth bounds", () => {
    const wide = { and: Array.from({ length: MAX_LOGIC_RULE_NODES }, () => true) };
    expect(ruleProblem(wide)).toMatch(/nodes/);
    let deep: unknown = true;
    for (let i = 0; i <= MAX_LOGIC_DEPTH; i++) deep = { "!": [deep] };
    expect(ruleProblem(deep)).toMatch(/levels deep/);
    expect(MAX_LOGIC_VALUE_SIZE).toBeGreaterThan(1000);
  });
});
