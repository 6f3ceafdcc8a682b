import { describe, expect, it } from "vitest";
import { agentContributions } from "../agents/contributions";
import { approvalContributions } from "../approvals/contributions";
import { executionContributions } from "../executions/contributions";
import { identityContributions } from "../identity/contributions";
import { marketplaceContributions } from "../marketplace/contributions";
import { webhookContributions } from "../webhooks/contributions";
import { workflowContributions } from "../workflows/contributions";
import {
  assertDeclaredPlatformEventType,
  isReservedEventType,
  platformEntriesMatchedBy,
  registerPlatformEventGroups,
  UndeclaredPlatformEventType,
} from "./platformEventTypes";

/**
 * The catalogue as a mechanism, filled here from some areas' declarations as the root fills it
 * from all (that every type an area raises is declared is tested on the composed root:
 * tests/integration/areas.test.ts).
 */
describe("the platform event type catalogue", () => {
  it("reserves nothing and lets nothing be raised before the root has registered the areas' groups", () => {
    expect(isReservedEventType("agent.deployed")).toBe(false);
    expect(() => assertDeclaredPlatformEventType("agent.deployed")).toThrow(UndeclaredPlatformEventType);
  });

  it("reserves the declared families and types, not look-alikes", () => {
    for (const c of [
      identityContributions,
      agentContributions,
      executionContributions,
      approvalContributions,
      workflowContributions,
      marketplaceContributions,
      webhookContributions,
    ])
      registerPlatformEventGroups(c.platformEvents);
    for (const t of [
      "agent.deployed",
      "agent.x.y",
      "execution.completed",
      "approval.requested",
      "workflow.failed",
      "connector.installed",
      "webhook.disabled",
      "delegation.revoked",
    ]) {
      expect(isReservedEventType(t), t).toBe(true);
    }
    for (const t of [
      "agents.deployed",
      "agent",
      "execution",
      "webhook.enabled",
      "delegation.created",
      "invoice.paid",
      "executionx.completed",
    ]) {
      expect(isReservedEventType(t), t).toBe(false);
    }
    // The console's form, with the patterns its page received.
    expect(isReservedEventType("prompt.published", ["prompt.*"])).toBe(true);
  });

  it("raises only a declared type: reserved under a family is not enough", () => {
    assertDeclaredPlatformEventType("agent.deployed");
    expect(() => assertDeclaredPlatformEventType("agent.renamed")).toThrow(UndeclaredPlatformEventType);
  });

  it("tells which entries a subscription pattern reaches, and so which read capability it needs", () => {
    const caps = (p: string) => platformEntriesMatchedBy(p).map((e) => e.readCapability);
    expect(caps("execution.completed")).toEqual(["svc_api:executions:read"]);
    expect(caps("execution.*")).toEqual(["svc_api:executions:read"]);
    expect(caps("agent.deployed.*")).toEqual(["svc_api:agents:read"]);
    expect(caps("webhook.*")).toEqual(["svc_api:events:read"]);
    expect(caps("delegation.*")).toEqual(["svc_api:delegations:read"]);
    expect(caps("invoice.*")).toEqual([]);
    expect(caps("webhook.enabled")).toEqual([]);
  });

  it("takes a later area's group, and refuses a type outside its pattern or a pattern read by two capabilities", () => {
    expect(isReservedEventType("prompt.published")).toBe(false);
    registerPlatformEventGroups([
      {
        pattern: "prompt.*",
        readCapability: "svc_api:prompts:read",
        description: "prompts",
        types: ["prompt.published"],
      },
    ]);
    expect(isReservedEventType("prompt.published")).toBe(true);
    expect(platformEntriesMatchedBy("prompt.published").map((e) => e.readCapability)).toEqual(["svc_api:prompts:read"]);
    expect(() =>
      registerPlatformEventGroups([
        { pattern: "note.*", readCapability: "svc_api:notes:read", description: "notes", types: ["memo.filed"] },
      ]),
    ).toThrow(/not under/);
    expect(() =>
      registerPlatformEventGroups([
        { pattern: "agent.*", readCapability: "svc_api:events:read", description: "agents", types: [] },
      ]),
    ).toThrow(/declared twice/);
  });
});
