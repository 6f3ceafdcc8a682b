import { describe, expect, it } from "vitest";
import type { Operation } from "./operation";
import { registeredOperations, registerOperations } from "./operationRegistry";

describe("the operation registry", () => {
  it("refuses to answer before the root registers its operations, then answers them in order", () => {
    expect(() => registeredOperations()).toThrow(/composeServer/);
    const ops = [{ id: "b" }, { id: "a" }] as unknown as Operation[];
    registerOperations(ops);
    expect(registeredOperations().map((op) => op.id)).toEqual(["b", "a"]);
    // A copy: the caller's array changing later does not change the routing table's source.
    ops.pop();
    expect(registeredOperations()).toHaveLength(2);
  });
});
