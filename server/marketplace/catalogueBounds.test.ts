import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DomainError } from "../errors";
import { compileConnector } from "./catalogue";

/** The built-in GitHub definition with its first action's input_schema replaced. */
function withInputSchema(input_schema: object) {
  const raw = JSON.parse(readFileSync(join(process.cwd(), "server/marketplace/connectors/github.json"), "utf8"));
  raw.actions[0].input_schema = input_schema;
  return raw;
}
const times = { createdAt: new Date(), updatedAt: new Date() };

describe("connector schemas are checked within bounds", () => {
  it("matches an action's pattern in linear time (a caller's input against the operator's schema)", () => {
    const connector = compileConnector(
      withInputSchema({ type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } } }),
      "test.json",
      times,
    );
    const validate = [...connector.actions.values()][0]!.validateInput;
    const t = performance.now();
    expect(validate({ q: `${"a".repeat(5000)}!` })).toBe(false);
    // Generous for a loaded machine: with a backtracking engine this did not return.
    expect(performance.now() - t).toBeLessThan(2000);
  });

  it("refuses at load a pattern RE2 cannot run, naming it", () => {
    expect(() =>
      compileConnector(withInputSchema({ properties: { q: { pattern: "(?=a)a" } } }), "test.json", times),
    ).toThrow(/actions\.0\.input_schema\.properties\.q\.pattern/);
  });

  it("answers 400 naming `input` when a validation exceeds its work bound", () => {
    const defs: Record<string, unknown> = { l30: { type: "string" } };
    for (let i = 0; i < 30; i++)
      defs[`l${i}`] = { anyOf: [{ $ref: `#/definitions/l${i + 1}` }, { $ref: `#/definitions/l${i + 1}` }] };
    const connector = compileConnector(
      withInputSchema({ definitions: defs, $ref: "#/definitions/l0" }),
      "t.json",
      times,
    );
    const validate = [...connector.actions.values()][0]!.validateInput;
    let error: DomainError | undefined;
    try {
      validate(1);
    } catch (e) {
      error = e as DomainError;
    }
    expect(error?.status).toBe(400);
    expect(error?.extra.errors).toEqual([expect.objectContaining({ field: "input", code: "OUT_OF_RANGE" })]);
  });
});
