import { z } from "zod";
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { parseOrThrow } from "./validation";

const schema = z
  .object({ kind: z.enum(["a", "b"]), n: z.number().int().min(1).max(5), s: z.string().email().optional() })
  .strict();

function errorsOf(input: unknown, against: z.ZodType = schema) {
  try {
    parseOrThrow(against, input);
  } catch (e) {
    return (e as DomainError).extra.errors;
  }
  return [];
}

describe("validation errors", () => {
  it("map zod issues to the contract's codes", () => {
    expect(errorsOf({ n: 1 })).toEqual([expect.objectContaining({ field: "kind", code: "REQUIRED_FIELD_MISSING" })]);
    expect(errorsOf({ kind: "c", n: 1 })).toEqual([
      expect.objectContaining({ field: "kind", code: "INVALID_ENUM", expected: "a | b", received: '"c"' }),
    ]);
    expect(errorsOf({ kind: "a", n: "1" })).toEqual([
      expect.objectContaining({ field: "n", code: "INVALID_TYPE", expected: "number", received: "string" }),
    ]);
    expect(errorsOf({ kind: "a", n: 9 })).toEqual([expect.objectContaining({ field: "n", code: "OUT_OF_RANGE" })]);
    expect(errorsOf({ kind: "a", n: 1, s: "nope" })).toEqual([
      expect.objectContaining({ field: "s", code: "INVALID_FORMAT", expected: "email", received: '"nope"' }),
    ]);
    expect(errorsOf({ kind: "a", n: 1, extra: true })).toEqual([
      expect.objectContaining({ field: "extra", code: "UNKNOWN_FIELD" }),
    ]);
  });

  it("show the value that was sent for enum, literal and format errors, cut to 100 characters", () => {
    expect(errorsOf({ v: "server" }, z.object({ v: z.literal("device_only") }))).toEqual([
      expect.objectContaining({ field: "v", code: "INVALID_ENUM", received: '"server"' }),
    ]);
    const [long] = errorsOf({ kind: "x".repeat(5000), n: 1 })!;
    expect(long!.received!.length).toBeLessThanOrEqual(100);
    expect(long!.received!.startsWith('"xxx')).toBe(true);
    const [astral] = errorsOf({ kind: "😀".repeat(200), n: 1 })!;
    expect(Array.from(astral!.received!)).toHaveLength(100);
    expect(astral!.received).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(errorsOf({ did: "key:z6Mk" }, z.object({ did: z.string().regex(/^did:/) }))).toEqual([
      expect.objectContaining({
        field: "did",
        code: "INVALID_FORMAT",
        expected: "pattern /^did:/",
        received: '"key:z6Mk"',
      }),
    ]);
  });
});
