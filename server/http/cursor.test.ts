import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { decodeCursor, encodeCursor } from "./cursor";

const secret = randomBytes(32);

describe("cursors", () => {
  it("round-trip for the list that issued them", () => {
    const c = encodeCursor(secret, "passports", ["2026-01-01T00:00:00.000Z", "did:key:z1"]);
    expect(decodeCursor(secret, "passports", c)).toEqual(["2026-01-01T00:00:00.000Z", "did:key:z1"]);
  });

  it("refuse another list's cursor, an edited one, another secret's, and garbage", () => {
    const c = encodeCursor(secret, "passports", ["a"]);
    const edited = `${Buffer.from('["b"]').toString("base64url")}.${c.split(".")[1]}`;
    for (const [list, cursor, key] of [["delegations", c, secret], ["passports", edited, secret], ["passports", c, randomBytes(32)], ["passports", "x", secret], ["passports", "a.b.c", secret]] as const) {
      try {
        decodeCursor(key, list, cursor);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(DomainError);
        expect((e as DomainError).extra.errors?.[0]).toMatchObject({ field: "cursor", code: "INVALID_CURSOR" });
      }
    }
  });
});
