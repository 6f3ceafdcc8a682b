import { describe, expect, it } from "vitest";
import { roleCapabilities } from "../members/roles";
import { approvalContributions } from "../approvals/contributions";
import { agentContributions } from "../agents/contributions";
import { identityContributions } from "./contributions";
import {
  capability,
  capabilityCatalogue,
  capabilityGroups,
  decidingCapabilities,
  isKnownCapability,
  registerCapabilities,
} from "./capabilityCatalogue";
import { CAPABILITY_PATTERN } from "./capabilities";

/**
 * The catalogue as a mechanism: a registry the composition root fills from the areas'
 * contributions. That every capability the root's operations and procedures check is declared,
 * and the contract's table, are tested on the composed root (tests/integration/areas.test.ts).
 */
describe("the capability catalogue", () => {
  it("knows nothing before the root has registered the areas' capabilities (fails closed)", () => {
    for (const c of ["svc_api:*", "svc_api:passports:read", "svc_api:agents:*"])
      expect(isKnownCapability(c), c).toBe(false);
    expect(capabilityGroups().flatMap((g) => g.capabilities.map((c) => c.capability))).toEqual(["svc_api:*"]);
  });

  it("knows what the areas declared, each described, and their families; nothing else", () => {
    for (const contribution of [identityContributions, agentContributions, approvalContributions])
      registerCapabilities(contribution.capabilities);
    for (const c of ["svc_api:*", "svc_api:agents:*", "svc_api:passports:admin", "svc_api:approvals:respond"])
      expect(isKnownCapability(c), c).toBe(true);
    for (const c of [
      "svc_api:pasports:read",
      "svc_api:agentz:*",
      "svc_api:agents:fly",
      "other:thing",
      "svc_api:nosuch:*",
    ])
      expect(isKnownCapability(c), c).toBe(false);
    for (const e of capabilityCatalogue()) {
      expect(CAPABILITY_PATTERN.test(e.capability), e.capability).toBe(true);
      expect(e.description.length, e.capability).toBeGreaterThan(10);
    }
  });

  it("refuses a capability declared twice with other words, or outside a declared capability area", () => {
    expect(() =>
      registerCapabilities({ areas: {}, capabilities: [capability("agents", "read", "Something else entirely.")] }),
    ).toThrow(/declared twice/);
    expect(() =>
      registerCapabilities({ areas: {}, capabilities: [capability("undeclared", "read", "Read undeclared things.")] }),
    ).toThrow(/not declared/);
    // The same declaration again (a second composition) is harmless.
    registerCapabilities(agentContributions.capabilities);
  });

  it("feeds the roles, the key picker and the passkey step-up from the declarations", () => {
    expect(roleCapabilities("viewer")).toEqual(
      expect.arrayContaining(["svc_api:agents:read", "svc_api:passports:read", "svc_api:approvals:read"]),
    );
    expect(roleCapabilities("viewer")).not.toContain("svc_api:approvals:respond");
    expect(roleCapabilities("approver")).toContain("svc_api:approvals:respond");
    const groups = capabilityGroups();
    expect(groups.map((g) => g.area)).toEqual(["all", "passports", "delegations", "agents", "approvals"]);
    const deciding = groups.flatMap((g) => g.capabilities.filter((c) => c.decides).map((c) => c.capability));
    expect(deciding).toEqual(["svc_api:approvals:respond"]);
    expect(decidingCapabilities(["svc_api:approvals:*", "svc_api:agents:read"])).toEqual(["svc_api:approvals:*"]);
    // What the console does with the list its page received.
    expect(decidingCapabilities(["svc_api:*"], deciding)).toEqual(["svc_api:*"]);
  });
});
