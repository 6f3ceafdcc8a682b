import { describe, expect, it } from "vitest";
import { newId } from "./ids";

describe("newId", () => {
  it("is <prefix>_ and 26 Crockford base32 characters, time first, so ids sort by creation", async () => {
    const a = newId("req");
    expect(a).toMatch(/^req_[0-9a-hjkmnp-tv-z]{26}$/);
    await new Promise((r) => setTimeout(r, 2));
    const b = newId("req");
    expect(b.slice(4, 14) > a.slice(4, 14)).toBe(true);
  });

  it("never repeats, across many refills of its random pool, and its random part is spread evenly", () => {
    const ids = Array.from({ length: 100_000 }, () => newId("x"));
    expect(new Set(ids).size).toBe(ids.length);
    // The 16 random characters: every symbol of the alphabet about equally often (~50,000 each).
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id.slice(12)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(32);
    for (const n of counts.values()) expect(Math.abs(n - 50_000)).toBeLessThan(2_500);
  });
});
