import { z } from "zod";
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { parseOrThrow } from "./validation";

const schema = z.object({ kind: z.enum(["a", "b"]), n: z.number().int().min(1).max(5), s: z.string().email().optional() }).strict();

function errorsOf(input: unknown) {
  try {
    parseOrThrow(schema, input);
  } catch (e) {
    return (e as DomainError).extra.errors;
  }
  return [];
}

describe("validation errors", () => {
  it("map zod issues to the contract's codes", () => {
    expect(errorsOf({ n: 1 })).toEqual([expect.objectContaining({ field: "kind", code: "REQUIRED_FIELD_MISSING" })]);
    expect(errorsOf({ kind: "c", n: 1 })).toEqual([expect.objectContaining({ field: "kind", code: "INVALID_ENUM" })]);
    expect(errorsOf({ kind: "a", n: "1" })).toEqual([expect.objectContaining({ field: "n", code: "INVALID_TYPE", expected: "number", received: "string" })]);
    expect(errorsOf({ kind: "a", n: 9 })).toEqual([expect.objectContaining({ field: "n", code: "OUT_OF_RANGE" })]);
    expect(errorsOf({ kind: "a", n: 1, s: "nope" })).toEqual([expect.objectContaining({ field: "s", code: "INVALID_FORMAT" })]);
    expect(errorsOf({ kind: "a", n: 1, extra: true })).toEqual([expect.objectContaining({ field: "extra", code: "UNKNOWN_FIELD" })]);
  });
});
