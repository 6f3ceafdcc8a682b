import { describe, expect, it } from "vitest";
import { ROLE_CAPABILITIES } from "../members/roles";
import { CAPABILITY_CATALOGUE, capabilityGroups, isKnownCapability } from "./capabilityCatalogue";
import { CAPABILITY_PATTERN } from "./capabilities";

/** The API contract's table of capabilities (docs: api-contract.md, "The capability each route family checks"). */
const CONTRACT = [
  "svc_api:passports:read",
  "svc_api:passports:write",
  "svc_api:delegations:read",
  "svc_api:delegations:write",
  "svc_api:provenance:read",
  "svc_api:agents:read",
  "svc_api:agents:deploy",
  "svc_api:agents:invoke",
  "svc_api:agents:manage",
  "svc_api:approvals:read",
  "svc_api:approvals:write",
  "svc_api:approvals:respond",
  "svc_api:approvals:admin",
  "svc_api:executions:read",
  "svc_api:executions:write",
  "svc_api:workflows:read",
  "svc_api:workflows:write",
  "svc_api:events:read",
  "svc_api:events:write",
  "svc_api:marketplace:read",
  "svc_api:marketplace:install",
  "svc_api:marketplace:rate",
  "svc_api:marketplace:invoke",
  "svc_api:compliance:read",
  "svc_api:models:read",
  "svc_api:reasoning:think",
  "svc_api:benchmarks:write",
  "svc_api:prompts:read",
  "svc_api:prompts:publish",
  "svc_api:cp:read",
  "svc_api:cp:write",
  "svc_api:learning:read",
  "svc_api:learning:propose",
  "svc_api:learning:decide",
];

describe("the capability catalogue", () => {
  it("lists every capability of the contract, the organization-wide ones and the console's own, each described", () => {
    for (const c of [
      ...CONTRACT,
      "svc_api:passports:admin",
      "svc_api:delegations:admin",
      "svc_api:members:read",
      "svc_api:members:write",
    ])
      expect(isKnownCapability(c), c).toBe(true);
    for (const e of CAPABILITY_CATALOGUE) {
      expect(CAPABILITY_PATTERN.test(e.capability), e.capability).toBe(true);
      expect(e.description.length, e.capability).toBeGreaterThan(10);
    }
    expect(new Set(CAPABILITY_CATALOGUE.map((e) => e.capability)).size).toBe(CAPABILITY_CATALOGUE.length);
  });

  it("knows the families of its areas, and nothing else", () => {
    expect(isKnownCapability("svc_api:*")).toBe(true);
    expect(isKnownCapability("svc_api:agents:*")).toBe(true);
    for (const c of ["svc_api:pasports:read", "svc_api:agentz:*", "svc_api:agents:fly", "other:thing"])
      expect(isKnownCapability(c), c).toBe(false);
  });

  it("feeds the roles and the key picker", () => {
    for (const caps of Object.values(ROLE_CAPABILITIES))
      for (const c of caps) expect(isKnownCapability(c), c).toBe(true);
    expect(ROLE_CAPABILITIES.viewer).toEqual(
      expect.arrayContaining(["svc_api:members:read", "svc_api:passports:read", "svc_api:learning:read"]),
    );
    const picker = capabilityGroups().flatMap((g) => g.capabilities.map((c) => c.capability));
    expect(picker).toEqual(expect.arrayContaining([...CONTRACT, "svc_api:*"]));
  });
});
