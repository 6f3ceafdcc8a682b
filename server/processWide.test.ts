import { describe, expect, it } from "vitest";
import { processWide, resetProcessWide } from "./processWide";

describe("resetProcessWide", () => {
  it("puts state back in place, keeping the named ones, and stops the timers a state held", () => {
    const map = processWide("test.resetMap", () => new Map<string, number>());
    const obj = processWide("test.resetObject", () => ({
      count: 0,
      timer: undefined as ReturnType<typeof setInterval> | undefined,
    }));
    const kept = processWide("test.resetKept", () => ({ count: 0 }));
    map.set("a", 1);
    obj.count = 3;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    obj.timer = timer;
    (obj as Record<string, unknown>).extra = true;
    kept.count = 5;
    resetProcessWide(new Set(["test.resetKept"]));
    expect(processWide("test.resetMap", () => new Map())).toBe(map);
    expect(map.size).toBe(0);
    expect(processWide("test.resetObject", () => ({}))).toBe(obj);
    expect(obj).toEqual({ count: 0, timer: undefined });
    expect(kept.count).toBe(5);
    // A cleared interval has been closed (Node marks it destroyed).
    expect((timer as unknown as { _destroyed: boolean })._destroyed).toBe(true);
  });
});
