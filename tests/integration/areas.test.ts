import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  areas,
  checkedCapabilities,
  consoleNavigation,
  NAV_SECTIONS,
  type Area,
  navigationFor,
  offeredCapabilityAreas,
} from "@/server/areas";
import { errorCodes } from "@/server/errorCatalogue";
import {
  platformEventCatalogue,
  platformEventEntry,
  registeredPlatformEventTypes,
} from "@/server/events/platformEventTypes";
import {
  capabilityAreas,
  capabilityCatalogue,
  capabilityGroups,
  isKnownCapability,
} from "@/server/identity/capabilityCatalogue";
import { registeredJobKinds } from "@/server/jobs";
import { bridgeEntries } from "@/server/sandbox/bridge";
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

/** The API contract's table of capabilities (api-contract.md, "The capability each route family checks"): the spec, not the code. */
const CONTRACT = [
  ...["passports:read", "passports:write", "delegations:read", "delegations:write", "provenance:read"],
  ...["agents:read", "agents:deploy", "agents:invoke", "agents:manage"],
  ...["approvals:read", "approvals:write", "approvals:respond", "approvals:admin"],
  ...["executions:read", "executions:write", "workflows:read", "workflows:write", "events:read", "events:write"],
  ...["marketplace:read", "marketplace:install", "marketplace:rate", "marketplace:invoke", "compliance:read"],
  ...["models:read", "reasoning:think", "benchmarks:write", "prompts:read", "prompts:publish", "cp:read", "cp:write"],
  ...["learning:read", "learning:propose", "learning:decide"],
].map((c) => `svc_api:${c}`);

const rootAreas = Object.values(areas) as Area[];

describe("the capability catalogue is what the areas declare (issue 29.1)", () => {
  it("every capability an operation or procedure checks is declared by some area, and offered", () => {
    const checked = checkedCapabilities();
    expect(checked.length).toBeGreaterThan(100);
    for (const c of checked) expect(isKnownCapability(c), c).toBe(true);
  });

  it("every capability area an area declares is checked by some operation or procedure (none offered for nothing)", () => {
    const declared = rootAreas.flatMap((a) => Object.keys(a.capabilities?.areas ?? {}));
    expect(new Set(declared).size).toBe(declared.length);
    expect([...offeredCapabilityAreas].sort()).toEqual([...declared].sort());
    expect([...capabilityAreas().keys()].sort()).toEqual([...declared].sort());
  });

  it("lists every capability of the API contract, each described", () => {
    for (const c of CONTRACT) expect(isKnownCapability(c), c).toBe(true);
    for (const e of capabilityCatalogue()) expect(e.description.length, e.capability).toBeGreaterThan(10);
  });

  it("console roles hold only declared capabilities; the picker lists every declared one", () => {
    for (const role of ["admin", "approver", "viewer"] as const)
      expect(roleCapabilities(role).every(isKnownCapability), role).toBe(true);
    expect(roleCapabilities("viewer")).toEqual(
      expect.arrayContaining(["svc_api:agents:read", "svc_api:members:read", "svc_api:events:read"]),
    );
    // What app/(console)/keys/page.tsx gives the picker.
    const picker = capabilityGroups().flatMap((g) => g.capabilities.map((c) => c.capability));
    expect(picker).toEqual(expect.arrayContaining(["svc_api:*", ...capabilityCatalogue().map((c) => c.capability)]));
  });

  it("an empty session exchange grants the contract's default; a capability no area declared is a 400 naming it", async () => {
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
    for (const capability of ["svc_api:nosuch:read", "svc_api:nosuch:*", "svc_api:agents:fly"]) {
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
    const areaEntries = rootAreas.flatMap((a) => a.nav ?? []);
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
            /^(registerJobKind|registerBridgeEntry|registerSubscriptionDispatcher|onDelegationsRevoked|registerTask|offerCapabilityAreas|registerCapabilities|registerPlatformEventGroups|registerErrorCodes)\b/.test(
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

  it("the registries hold exactly what the root's areas name", () => {
    const jobKinds = rootAreas.flatMap((a) => Object.keys(a.jobKinds ?? {}));
    expect(registeredJobKinds().sort()).toEqual([...jobKinds].sort());
    expect(jobKinds).toContain("execution.run");
    const bridge = rootAreas.flatMap((a) => Object.keys(a.bridge ?? {}));
    expect([...bridgeEntries().keys()].sort()).toEqual([...bridge].sort());
    expect(bridge).toContain("events.emit");
    expect(registeredPlatformEventTypes()).toEqual(
      [...new Set(rootAreas.flatMap((a) => (a.platformEvents ?? []).flatMap((g) => g.types)))].sort(),
    );
    expect(platformEventCatalogue().map((e) => e.pattern)).toEqual(
      rootAreas.flatMap((a) => (a.platformEvents ?? []).map((g) => g.pattern)),
    );
    const codes = rootAreas.flatMap((a) => Object.keys(a.errors ?? {}));
    expect(codes).toContain("installation_not_active");
    for (const code of codes) expect(errorCodes(), code).toContain(code);
  });

  it("every platform event type written in a putPlatformEvent call is declared by some area", () => {
    // A property over the source, beside the runtime guard (putPlatformEvent throws on an
    // undeclared type): the literal types each raising module passes.
    const raised = new Set<string>();
    for (const file of serverModules()) {
      const text = readFileSync(file, "utf8");
      if (!text.includes("putPlatformEvent(") || file.endsWith("platformEvents.ts")) continue;
      for (const call of text.split("putPlatformEvent(").slice(1)) {
        const type = /type:\s*([^,}\n]+)/.exec(call.slice(0, 400))?.[1] ?? "";
        for (const m of type.matchAll(/"([a-z][a-z0-9_]*\.[a-z0-9_.]+)"/g)) raised.add(m[1]!);
      }
    }
    expect([...raised]).toEqual(expect.arrayContaining(["agent.deployed", "approval.escalated", "learning.proposed"]));
    for (const type of raised) expect(registeredPlatformEventTypes(), type).toContain(type);
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
