import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { decodeCursor, encodeCursor, keyset } from "./cursor";

const secret = randomBytes(32);

describe("cursors", () => {
  it("round-trip for the list that issued them", () => {
    const c = encodeCursor(secret, "passports", ["2026-01-01T00:00:00.000Z", "did:key:z1"]);
    expect(decodeCursor(secret, "passports", c)).toEqual(["2026-01-01T00:00:00.000Z", "did:key:z1"]);
  });

  it("refuse another list's cursor, an edited one, another secret's, and garbage", () => {
    const c = encodeCursor(secret, "passports", ["a"]);
    const edited = `${Buffer.from('["b"]').toString("base64url")}.${c.split(".")[1]}`;
    for (const [list, cursor, key] of [
      ["delegations", c, secret],
      ["passports", edited, secret],
      ["passports", c, randomBytes(32)],
      ["passports", "x", secret],
      ["passports", "a.b.c", secret],
    ] as const) {
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

describe("keyset pagination", () => {
  // A list of 0..9, newest (largest) first, read the way a service reads its table.
  const rows = Array.from({ length: 10 }, (_, i) => 9 - i);
  const fetch = (after: (string | number)[] | undefined, take: number) =>
    rows.filter((r) => after === undefined || r < Number(after[0])).slice(0, take);

  it("walks a list page by page without gaps or repeats, and the last page says there is no more", () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const k = keyset<number>(secret, "numbers", { limit: 4, cursor }, (last) => [last]);
      expect(k.take).toBe(5);
      const { items, pagination } = k.page(fetch(k.after, k.take));
      seen.push(...items);
      cursor = pagination.next_cursor ?? undefined;
      expect(pagination.has_more).toBe(cursor !== undefined);
      pages++;
    } while (cursor);
    expect(seen).toEqual(rows);
    expect(pages).toBe(3);
  });

  it("refuses a cursor another list issued", () => {
    const { pagination } = keyset<number>(secret, "numbers", { limit: 2 }, (last) => [last]).page(fetch(undefined, 3));
    expect(() => keyset(secret, "letters", { limit: 2, cursor: pagination.next_cursor! }, () => [])).toThrow(
      DomainError,
    );
  });
});
