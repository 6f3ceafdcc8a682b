/**
 * JSON Logic, evaluated within bounds. json-logic-js evaluates without any: a `reduce` that
 * merges its accumulator with itself doubles an array per step (26 steps exhausted the heap),
 * `log` wrote to stdout, and `var` walked prototypes (`input.constructor.name`). This evaluator
 * keeps json-logic-js's semantics for its operations (the unit test runs both on the same rules)
 * and adds:
 * - every operation, and every element `map`, `filter`, `reduce`, `all`, `some`, `none` or `in`
 *   visits, and every element or character a value built by an operation holds, is work:
 *   at most MAX_LOGIC_WORK units per evaluation, and no built value (array, string) larger than
 *   MAX_LOGIC_VALUE_SIZE; a deadline of MAX_LOGIC_MS besides;
 * - a rule of at most MAX_LOGIC_RULE_NODES nodes, nested at most MAX_LOGIC_DEPTH deep;
 * - only the operations listed in OPERATIONS: `log` and any method call are unknown;
 * - `var` reads own properties of plain data only.
 * A bound that is hit throws LogicLimitExceeded; an unknown operation, LogicRuleInvalid.
 */

/** The most work units (operations, visited elements, built elements and characters) one evaluation may take. */
export const MAX_LOGIC_WORK = 100_000;
/** The most elements or characters one value built by an operation may hold. */
export const MAX_LOGIC_VALUE_SIZE = 50_000;
/** The wall-clock deadline of one evaluation (milliseconds); the work bound is usually reached first. */
export const MAX_LOGIC_MS = 50;
/** The most nodes (operations, arrays, constants) a rule may hold. */
export const MAX_LOGIC_RULE_NODES = 2_000;
/** How deep a rule's operations may nest. */
export const MAX_LOGIC_DEPTH = 32;

/** A bound was hit: the evaluation stopped. */
export class LogicLimitExceeded extends Error {}
/** The rule is not one svc evaluates (an unknown operation, too large, too deep). */
export class LogicRuleInvalid extends Error {}

type Data = unknown;

const SPECIAL = new Set(["if", "?:", "and", "or", "filter", "map", "reduce", "all", "none", "some"]);
const PLAIN = new Set([
  "==",
  "===",
  "!=",
  "!==",
  ">",
  ">=",
  "<",
  "<=",
  "!!",
  "!",
  "%",
  "in",
  "cat",
  "substr",
  "+",
  "*",
  "-",
  "/",
  "min",
  "max",
  "merge",
  "var",
  "missing",
  "missing_some",
]);
/** Every operation svc evaluates. */
export const OPERATIONS: ReadonlySet<string> = new Set([...SPECIAL, ...PLAIN]);

function isLogic(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 1;
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value) && value.length === 0) return false;
  return !!value;
}

/**
 * Why `rule` cannot be evaluated (an unknown operation, too many nodes, too deep), or undefined.
 * Walks the rule without evaluating it.
 */
export function ruleProblem(rule: unknown): string | undefined {
  let nodes = 0;
  // [node, depth, inside a constant object (data, never evaluated)]
  const stack: [unknown, number, boolean][] = [[rule, 0, false]];
  while (stack.length > 0) {
    const [node, depth, constant] = stack.pop()!;
    if (++nodes > MAX_LOGIC_RULE_NODES) return `The rule has more than ${MAX_LOGIC_RULE_NODES} nodes.`;
    if (depth > MAX_LOGIC_DEPTH) return `The rule nests more than ${MAX_LOGIC_DEPTH} levels deep.`;
    if (Array.isArray(node)) for (const n of node) stack.push([n, depth + 1, constant]);
    else if (!constant && isLogic(node)) {
      const op = Object.keys(node)[0]!;
      if (!OPERATIONS.has(op))
        return `Unknown JSON Logic operation ${JSON.stringify(op)} (svc evaluates ${[...OPERATIONS].join(" ")}).`;
      stack.push([node[op], depth + 1, false]);
    } else if (typeof node === "object" && node !== null)
      // An object of several keys is a constant: its values are data, not logic, but still count.
      for (const v of Object.values(node)) stack.push([v, depth + 1, true]);
  }
  return undefined;
}

/** The work and time left to one evaluation (or to the trial evaluations of one definition). */
export class LogicMeter {
  private left = MAX_LOGIC_WORK;
  private readonly deadline = performance.now() + MAX_LOGIC_MS;
  private sinceClock = 0;

  spend(units: number): void {
    this.left -= units;
    if (this.left < 0) throw new LogicLimitExceeded(`The rule takes more than ${MAX_LOGIC_WORK} units of work.`);
    this.sinceClock += units;
    if (this.sinceClock >= 1024) {
      this.sinceClock = 0;
      if (performance.now() > this.deadline)
        throw new LogicLimitExceeded(`The rule takes more than ${MAX_LOGIC_MS} ms to evaluate.`);
    }
  }

  /** Charges a value about to be built of `size` elements or characters, refusing one too large. */
  build(size: number): void {
    if (size > MAX_LOGIC_VALUE_SIZE)
      throw new LogicLimitExceeded(
        `The rule builds a value of more than ${MAX_LOGIC_VALUE_SIZE} elements or characters.`,
      );
    this.spend(size);
  }
}

/** JavaScript's String(value) for JSON data, built within the meter (an array's is the join of its elements'). */
function text(value: unknown, meter: LogicMeter): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const parts: string[] = [];
    let length = 0;
    for (const item of value) {
      const part = item === null || item === undefined ? "" : text(item, meter);
      length += part.length + 1;
      meter.build(length);
      parts.push(part);
    }
    return parts.join(",");
  }
  if (typeof value === "object" && value !== null) return "[object Object]";
  return String(value);
}

/** JavaScript's ToPrimitive for JSON data: arrays and objects become their text. */
function primitive(value: unknown, meter: LogicMeter): string | number | boolean | null | undefined {
  return typeof value === "object" && value !== null ? text(value, meter) : (value as string | number | boolean);
}

const num = (value: unknown, meter: LogicMeter) => Number(primitive(value, meter));

/** `a == b` as JavaScript has it, for JSON data. */
function looseEquals(a: unknown, b: unknown, meter: LogicMeter): boolean {
  const objectA = typeof a === "object" && a !== null;
  const objectB = typeof b === "object" && b !== null;
  if (objectA && objectB) return a === b;
  return primitive(a, meter) == primitive(b, meter);
}

/** `var`: a dotted path through own properties of plain data (never a prototype's). */
function readVar(data: Data, path: unknown, fallback: unknown): unknown {
  const notFound = fallback === undefined ? null : fallback;
  if (path === undefined || path === "" || path === null) return data;
  let value: unknown = data;
  for (const segment of String(path).split(".")) {
    if (value === null || value === undefined) return notFound;
    if (typeof value !== "object" || !Object.hasOwn(value, segment)) return notFound;
    value = (value as Record<string, unknown>)[segment];
    if (value === undefined) return notFound;
  }
  return value;
}

function evaluate(rule: unknown, data: Data, meter: LogicMeter, depth: number): unknown {
  if (depth > MAX_LOGIC_DEPTH * 2)
    throw new LogicLimitExceeded(`The rule nests more than ${MAX_LOGIC_DEPTH} levels deep.`);
  meter.spend(1);
  if (Array.isArray(rule)) {
    meter.build(rule.length);
    return rule.map((r) => evaluate(r, data, meter, depth + 1));
  }
  if (!isLogic(rule)) return rule;
  const op = Object.keys(rule)[0]!;
  if (!OPERATIONS.has(op)) throw new LogicRuleInvalid(`Unrecognized operation ${op}`);
  const raw = rule[op];
  const values = Array.isArray(raw) ? raw : [raw];
  const ev = (r: unknown, d: Data = data) => evaluate(r, d, meter, depth + 1);

  if (op === "if" || op === "?:") {
    let i = 0;
    for (; i < values.length - 1; i += 2) if (truthy(ev(values[i]))) return ev(values[i + 1]);
    return values.length === i + 1 ? ev(values[i]) : null;
  }
  if (op === "and" || op === "or") {
    let current: unknown;
    for (const v of values) {
      current = ev(v);
      if (truthy(current) === (op === "or")) return current;
    }
    return current;
  }
  if (SPECIAL.has(op)) {
    const scoped = ev(values[0]);
    const logic = values[1];
    const each = (item: unknown, d: Data = item) => {
      meter.spend(1);
      return ev(logic, d);
    };
    if (op === "reduce") {
      const initial = values[2] !== undefined ? ev(values[2]) : null;
      if (!Array.isArray(scoped)) return initial;
      let accumulator = initial;
      for (const current of scoped) accumulator = each(current, { current, accumulator });
      return accumulator;
    }
    if (op === "map" || op === "filter") {
      if (!Array.isArray(scoped)) return [];
      meter.build(scoped.length);
      return op === "map" ? scoped.map((item) => each(item)) : scoped.filter((item) => truthy(each(item)));
    }
    if (!Array.isArray(scoped) || scoped.length === 0) return op === "none";
    if (op === "all") return scoped.every((item) => truthy(each(item)));
    if (op === "some") return scoped.some((item) => truthy(each(item)));
    return !scoped.some((item) => truthy(each(item)));
  }

  const args = values.map((v) => ev(v));
  const [a, b, c] = args;
  switch (op) {
    case "==":
      return looseEquals(a, b, meter);
    case "!=":
      return !looseEquals(a, b, meter);
    case "===":
      return a === b;
    case "!==":
      return a !== b;
    case ">":
      return primitive(a, meter)! > primitive(b, meter)!;
    case ">=":
      return primitive(a, meter)! >= primitive(b, meter)!;
    case "<":
    case "<=": {
      const less = (x: unknown, y: unknown) => {
        const [px, py] = [primitive(x, meter)!, primitive(y, meter)!];
        return op === "<" ? px < py : px <= py;
      };
      return c === undefined ? less(a, b) : less(a, b) && less(b, c);
    }
    case "!!":
      return truthy(a);
    case "!":
      return !truthy(a);
    case "%":
      return num(a, meter) % num(b, meter);
    case "in":
      if (typeof b === "string") {
        meter.spend(b.length);
        return b.includes(text(a, meter));
      }
      if (Array.isArray(b)) {
        meter.spend(b.length);
        return b.includes(a);
      }
      return false;
    case "cat": {
      const parts = args.map((v) => (v === null || v === undefined ? "" : text(v, meter)));
      meter.build(parts.reduce((n, p) => n + p.length, 0));
      return parts.join("");
    }
    case "substr": {
      const source = text(a, meter);
      const start = num(b, meter);
      if (c !== undefined && num(c, meter) < 0) {
        const tail = source.substr(start);
        return tail.substr(0, tail.length + num(c, meter));
      }
      return source.substr(start, c === undefined ? undefined : num(c, meter));
    }
    case "+":
      return args.reduce<number>((sum, v) => sum + parseFloat(text(v, meter)), 0);
    case "*":
      return args.length <= 1
        ? a
        : args.slice(1).reduce<number>((p, v) => p * parseFloat(text(v, meter)), parseFloat(text(a, meter)));
    case "-":
      return b === undefined ? -num(a, meter) : num(a, meter) - num(b, meter);
    case "/":
      return num(a, meter) / num(b, meter);
    case "min":
      return Math.min(...args.map((v) => num(v, meter)));
    case "max":
      return Math.max(...args.map((v) => num(v, meter)));
    case "merge": {
      meter.build(args.reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : 1), 0));
      return ([] as unknown[]).concat(...args.map((v) => (Array.isArray(v) ? v : [v])));
    }
    case "var":
      return readVar(data, a, b);
    case "missing":
      return missing(Array.isArray(a) ? a : args, data, meter);
    case "missing_some": {
      const options = Array.isArray(b) ? b : [];
      const absent = missing(options, data, meter);
      return options.length - absent.length >= num(a, meter) ? [] : absent;
    }
  }
  throw new LogicRuleInvalid(`Unrecognized operation ${op}`);
}

function missing(keys: readonly unknown[], data: Data, meter: LogicMeter): unknown[] {
  meter.build(keys.length);
  return keys.filter((key) => {
    const value = readVar(data, key, undefined);
    return value === null || value === "";
  });
}

/**
 * Evaluates `rule` over `data` within the bounds above (`meter`'s, when several evaluations share them). Throws LogicRuleInvalid for a rule svc
 * does not evaluate and LogicLimitExceeded when a bound is hit.
 */
export function applyLogic(rule: unknown, data: unknown, meter = new LogicMeter()): unknown {
  const problem = ruleProblem(rule);
  if (problem) throw new LogicRuleInvalid(problem);
  return evaluate(rule, data, meter, 0);
}

/** JSON Logic's truthiness (an empty array is false). */
export { truthy as logicTruthy };
