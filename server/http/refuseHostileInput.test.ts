import { describe, expect, it } from "vitest";
import type { DomainError } from "../errors";
import { requestHash } from "../provenance/record";
import { refuseHostileInput } from "./validation";

function refusal(value: unknown) {
  try {
    refuseHostileInput(value, "body");
  } catch (e) {
    return {
      status: (e as DomainError).status,
      errors: (e as DomainError).extra.errors as { field: string; code: string }[],
    };
  }
  return undefined;
}

describe("refuseHostileInput", () => {
  it("refuses lone surrogates in values and in keys as 400 INVALID_FORMAT", () => {
    for (const text of [
      '{"x":"\\ud800"}',
      '{"x":"a\\udc00b"}',
      '{"a":{"b":["ok","\\udbff"]}}',
      '{"\\ud800":1}',
      '"\\ud800"',
    ]) {
      const r = refusal(JSON.parse(text));
      expect(r, text).toMatchObject({ status: 400, errors: [expect.objectContaining({ code: "INVALID_FORMAT" })] });
    }
    expect(refusal(JSON.parse('{"a":{"b":["ok","\\udbff"]}}'))!.errors[0]!.field).toBe("a.b.1");
  });

  it("refuses numbers canonical JSON cannot carry", () => {
    expect(refusal(JSON.parse('{"x":1e999}'))).toMatchObject({
      status: 400,
      errors: [expect.objectContaining({ field: "x", code: "OUT_OF_RANGE" })],
    });
    expect(refusal({ x: 10n })).toMatchObject({ status: 400 });
  });

  it("accepts well-formed Unicode (paired surrogates, emoji)", () => {
    expect(refusal({ x: "💥 \ud83d\udca5 é", "clé 🔑": [1, 2.5, -0, true, null] })).toBeUndefined();
  });

  it("whatever it accepts can be hashed: requestHash never throws after it", () => {
    const samples = [
      '{"x":"\\ud800"}',
      '{"x":1e999}',
      '{"x":-1e999}',
      '{"\\udfff":"y"}',
      '[["\\ud800\\udc00"]]',
      '{"x":"\\u0000"}',
      '{"a":[{"b":"\\ud834"}]}',
      '"plain"',
      "12",
      "null",
    ];
    for (const text of samples) {
      const value = JSON.parse(text);
      if (refusal(value) === undefined) expect(() => requestHash(value), text).not.toThrow();
      else expect(refusal(value)!.status).toBe(400);
    }
  });
});
