import { describe, expect, it } from "vitest";
import { isReservedEventType, platformEntriesMatchedBy, reservePlatformEventTypes } from "./platformEventTypes";

describe("the platform event type catalogue", () => {
  it("reserves the contract's families and types, not look-alikes", () => {
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

  it("takes a later area's types", () => {
    expect(isReservedEventType("prompt.published")).toBe(false);
    reservePlatformEventTypes([
      { pattern: "prompt.*", readCapability: "svc_api:prompts:read", description: "prompts" },
    ]);
    expect(isReservedEventType("prompt.published")).toBe(true);
    expect(platformEntriesMatchedBy("prompt.published").map((e) => e.readCapability)).toEqual(["svc_api:prompts:read"]);
  });
});
