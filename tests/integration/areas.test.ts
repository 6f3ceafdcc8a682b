import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  areaOperations,
  areas,
  consoleNavigation,
  NAV_SECTIONS,
  type Area,
  navigationFor,
  offeredCapabilityAreas,
} from "@/server/areas";
import { platformEventEntry, registeredPlatformEventTypes } from "@/server/events/platformEventTypes";
import { capabilityGroups, isKnownCapability } from "@/server/identity/capabilityCatalogue";
import { roleCapabilities } from "@/server/members/roles";
import { call, ed25519Jwk, useTestServer } from "./harness";
import { serverModules } from "./sourceFiles";

/**
 * The composition root (server/areas.ts) names every area once; the navigation, the capability
 * catalogue and every registry derive from it.
 */
const t = useTestServer();
const api = (method: string, path: string, token: string, body?: unknown) =>
  call(t.server.url, method, path, { token, body });

const NOT_BUILT: string[] = [];

describe("the capability catalogue offers what exists (issue 14.5)", () => {
  it("offers the capability areas the root's operations and procedures check, and none of the areas not built yet", () => {
    expect([...offeredCapabilityAreas].sort()).toEqual([
      "agents",
      "approvals",
      "benchmarks",
      "compliance",
      "cp",
      "delegations",
      "events",
      "executions",
      "learning",
      "marketplace",
      "members",
      "metrics",
      "models",
      "passports",
      "prompts",
      "provenance",
      "reasoning",
      "workflows",
    ]);
    for (const op of areaOperations) if (op.capability) expect(isKnownCapability(op.capability), op.id).toBe(true);
    for (const area of NOT_BUILT) {
      expect(isKnownCapability(`svc_api:${area}:*`), area).toBe(false);
    }
    expect(isKnownCapability("svc_api:approvals:respond")).toBe(true);
    expect(isKnownCapability("svc_api:reasoning:think")).toBe(true);
    expect(isKnownCapability("svc_api:prompts:read")).toBe(true);
    expect(isKnownCapability("svc_api:learning:read")).toBe(true);
  });

  it("console roles hold no capability of an area not built yet", () => {
    for (const role of ["admin", "approver", "viewer"] as const) {
      const held = roleCapabilities(role);
      expect(
        held.filter((c) => NOT_BUILT.some((a) => c.startsWith(`svc_api:${a}:`))),
        role,
      ).toEqual([]);
      expect(held.every(isKnownCapability), role).toBe(true);
    }
    expect(roleCapabilities("viewer")).toEqual(
      expect.arrayContaining(["svc_api:agents:read", "svc_api:members:read", "svc_api:events:read"]),
    );
  });

  it("the key picker lists no capability of an area not built yet", () => {
    // What app/(console)/keys/page.tsx gives the picker.
    const picker = capabilityGroups(offeredCapabilityAreas).flatMap((g) => g.capabilities.map((c) => c.capability));
    expect(picker).toEqual(
      expect.arrayContaining([
        "svc_api:*",
        "svc_api:agents:invoke",
        "svc_api:events:write",
        "svc_api:members:read",
        "svc_api:cp:write",
      ]),
    );
    expect(picker.filter((c) => NOT_BUILT.some((a) => c.startsWith(`svc_api:${a}:`)))).toEqual([]);
  });

  it("an empty session exchange grants the contract's default (reasoning included, now that it is built); asking for a capability of an area not built yet is a 400 naming it", async () => {
    const exchanged = await api("POST", "/v1/sessions/exchange", t.root.token, {});
    expect(exchanged.status).toBe(201);
    expect(exchanged.body.capabilities.sort()).toEqual([
      "svc_api:agents:invoke",
      "svc_api:agents:read",
      "svc_api:reasoning:think",
    ]);
    const passport = await api("POST", "/v1/passports", t.root.token, {
      type: "agent",
      name: "picker",
      public_key: ed25519Jwk(),
    });
    // Every area of the contract is built now: an area the catalogue does not know stands in.
    for (const capability of [
      ...NOT_BUILT.flatMap((a) => [`svc_api:${a}:read`, `svc_api:${a}:*`]),
      "svc_api:nosuch:read",
    ]) {
      const res = await api("POST", "/v1/delegation-tokens", t.root.token, {
        delegate_did: passport.body.did,
        capabilities: [capability],
        duration_seconds: 60,
      });
      expect(res.status, capability).toBe(400);
      expect(JSON.stringify(res.body), capability).toContain("UNKNOWN_CAPABILITY");
    }
  });
});

describe("the console's navigation comes from the root", () => {
  it("each nav entry is a page of the console, and each console page has a nav entry", () => {
    const app = join(process.cwd(), "app");
    for (const entry of consoleNavigation) {
      const page = [join(app, "(console)", entry.href, "page.tsx"), join(app, entry.href, "page.tsx")].find(existsSync);
      expect(page, entry.href).toBeDefined();
    }
    const consolePages = readdirSync(join(app, "(console)"), { withFileTypes: true }).filter(
      (e) => e.isDirectory() && existsSync(join(app, "(console)", e.name, "page.tsx")),
    );
    for (const dir of consolePages)
      expect(
        consoleNavigation.map((n) => n.href),
        dir.name,
      ).toContain(`/${dir.name}`);
  });

  it("each entry's icon is a lucide-react icon", async () => {
    const lucide = (await import("lucide-react")) as unknown as Record<string, unknown>;
    for (const entry of consoleNavigation) expect(lucide[entry.icon], `${entry.href}: ${entry.icon}`).toBeDefined();
  });

  it("every entry but the overview is in a section, and each section's entries are together", () => {
    expect(consoleNavigation[0]?.href).toBe("/overview");
    for (const entry of consoleNavigation.slice(1)) expect(NAV_SECTIONS, entry.href).toContain(entry.section);
    const areaEntries = (Object.values(areas) as Area[]).flatMap((a) => a.nav ?? []);
    // None is lost to a section the list does not name.
    for (const entry of areaEntries) expect(consoleNavigation.map((n) => n.href)).toContain(entry.href);
    const order = consoleNavigation.slice(1).map((n) => NAV_SECTIONS.indexOf(n.section!));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it("entries carry the roles that see them", () => {
    expect(navigationFor("admin").map((n) => n.href)).toContain("/members");
    expect(navigationFor("viewer").map((n) => n.href)).not.toContain("/members");
    expect(navigationFor("viewer").map((n) => n.href)).toEqual(
      expect.arrayContaining(["/overview", "/agents", "/docs/api"]),
    );
  });
});

describe("registries are filled by the root, never by importing a module", () => {
  it("no server module registers at its top level or is imported for its side effects", () => {
    const files = serverModules();
    const offenders: string[] = [];
    for (const file of files) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (
            /^(registerJobKind|registerBridgeEntry|registerSubscriptionDispatcher|onDelegationsRevoked|registerTask|offerCapabilityAreas)\b/.test(
              line,
            ) ||
            /^import\s+["']\./.test(line)
          ) {
            offenders.push(`${relative(process.cwd(), file)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    expect(offenders).toEqual([]);
  });

  it("every area's job kinds, bridge entries, hooks and dispatchers are named in the root", () => {
    const jobKinds = Object.values(areas).flatMap((a) => Object.keys("jobKinds" in a ? a.jobKinds : {}));
    expect(jobKinds.sort()).toEqual([
      "agent.deploy",
      "execution.callback",
      "execution.run",
      "webhook.deliver",
      "workflow.node",
    ]);
    expect(Object.values(areas).flatMap((a) => Object.keys("bridge" in a ? a.bridge : {}))).toEqual([
      "approvals.request",
      "events.emit",
      "connectors.invoke",
      "reason",
    ]);
    expect(registeredPlatformEventTypes()).toEqual([
      "agent.activated",
      "agent.deactivated",
      "agent.deployed",
      "approval.decided",
      "approval.escalated",
      "approval.expired",
      "approval.requested",
      "connector.connection_expired",
      "connector.installed",
      "execution.completed",
      "execution.failed",
      "learning.applied",
      "learning.proposed",
      "learning.rolled_back",
      "webhook.disabled",
      "workflow.completed",
      "workflow.failed",
    ]);
  });

  it("every platform event type an area raises falls under a catalogue entry naming the capability that reads it", () => {
    // An area that raised types the catalogue missed (learning.*, once) let a webhook holding only
    // svc_api:events:read receive what they carry. A property, not a list: a new area is held to it.
    for (const type of registeredPlatformEventTypes()) {
      const entry = platformEventEntry(type);
      expect(entry, type).toBeDefined();
      expect(isKnownCapability(entry!.readCapability), `${type}: ${entry!.readCapability}`).toBe(true);
      if (type !== "webhook.disabled") expect(entry!.readCapability, type).not.toBe("svc_api:events:read");
    }
  });
});
