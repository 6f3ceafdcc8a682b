import { processWide } from "../processWide";
import { covers } from "./capabilities";

/**
 * The capability catalogue: every capability of the API contract's vocabulary, with what it
 * allows, as the areas declare them (each in its `server/<area>/contributions.ts`) and the
 * composition root registers them (`registerCapabilities`, from `composeServer` in
 * server/areas.ts). The role definitions (server/members/roles.ts), the console's key picker,
 * the docs and the check of every capability in a request read it.
 *
 * It fails closed: before the root has spoken nothing is known, and a capability no area declared
 * is refused in a request (400 `UNKNOWN_CAPABILITY`). An area's capabilities are offered only once
 * an operation or procedure of the root checks one (`offerCapabilityAreas`): declared but
 * unchecked, they stay out of the key picker and the session exchange's default grant.
 *
 * Pure (no node-only import): the console's forms read the types; the entries themselves reach
 * the browser as props from the server's pages, never from a copy of this module.
 */
export interface CapabilityEntry {
  /** `svc_api:<capability area>:<action>`. */
  capability: string;
  /** The capability area (`passports`, `cp`, …): the middle of the name, a family `svc_api:<area>:*`. */
  area: string;
  description: string;
  /**
   * It decides what people are asked to approve (approval requests, learning proposals): a
   * console session mints a key or token holding it (or a family covering it) only with a fresh
   * passkey assertion of its own (server/identity/passkeyStepUp.ts).
   */
  decides?: true;
}

/** What an area declares: the capability areas it names (with their titles) and their capabilities. */
export interface CapabilityContribution {
  /** Capability area → its title in the key picker (`events: "Events and webhooks"`). */
  areas: Readonly<Record<string, string>>;
  capabilities: readonly CapabilityEntry[];
}

/** One entry of an area's contribution. */
export const capability = (
  area: string,
  action: string,
  description: string,
  flags: { decides?: true } = {},
): CapabilityEntry => ({ capability: `svc_api:${area}:${action}`, area, description, ...flags });

const catalogue = processWide("identity.capabilityCatalogue", () => ({
  titles: new Map<string, string>(),
  entries: new Map<string, CapabilityEntry>(),
  // The capability areas the composition root offers (undefined until it has spoken).
  offered: undefined as ReadonlySet<string> | undefined,
}));

/**
 * Called by the composition root only: adds an area's capabilities. A capability or capability
 * area declared twice with different words is a mistake of the root's, thrown at start.
 */
export function registerCapabilities(contribution: CapabilityContribution): void {
  for (const [area, title] of Object.entries(contribution.areas)) {
    const known = catalogue.titles.get(area);
    if (known !== undefined && known !== title) throw new Error(`Capability area ${area} is declared twice.`);
    catalogue.titles.set(area, title);
  }
  for (const entry of contribution.capabilities) {
    if (!catalogue.titles.has(entry.area))
      throw new Error(`${entry.capability}: its capability area ${entry.area} is not declared.`);
    if (entry.capability !== `svc_api:${entry.area}:${entry.capability.split(":")[2]}`)
      throw new Error(`${entry.capability} is not of the form svc_api:${entry.area}:<action>.`);
    const known = catalogue.entries.get(entry.capability);
    if (known && known.description !== entry.description)
      throw new Error(`Capability ${entry.capability} is declared twice.`);
    catalogue.entries.set(entry.capability, entry);
  }
}

/** Every registered capability, in the root's order. */
export function capabilityCatalogue(): readonly CapabilityEntry[] {
  return [...catalogue.entries.values()];
}

/** The registered capability areas with their titles, in the root's order. */
export function capabilityAreas(): ReadonlyMap<string, string> {
  return catalogue.titles;
}

/** Families a capability list may name: everything, or one area. */
export function capabilityFamilies(): { capability: string; description: string }[] {
  return [
    { capability: "svc_api:*", description: "Every capability, of every area (an administrator)." },
    ...[...catalogue.titles].map(([area, title]) => ({
      capability: `svc_api:${area}:*`,
      description: `Every ${title.toLowerCase()} capability.`,
    })),
  ];
}

/** The area of `svc_api:<area>:…`, or undefined (`svc_api:*`, another namespace). */
export function capabilityAreaOf(capability: string): string | undefined {
  return /^svc_api:([a-z0-9_]+):/.exec(capability)?.[1];
}

/** Called by the composition root (server/areas.ts) only: the capability areas this service has operations for. */
export function offerCapabilityAreas(areas: Iterable<string>): void {
  catalogue.offered = new Set(areas);
}

/** Whether the service offers capabilities of `area` (every declared area before the offer is made). */
export function isOfferedArea(area: string, offered: ReadonlySet<string> | undefined = catalogue.offered): boolean {
  return !offered || offered.has(area);
}

/** Whether a capability (or family) is one an area declared and the service offers. */
export function isKnownCapability(capability: string): boolean {
  if (capability === "svc_api:*") return catalogue.titles.size > 0;
  const family = /^svc_api:([a-z0-9_]+):\*$/.exec(capability)?.[1];
  if (family !== undefined) return catalogue.titles.has(family) && isOfferedArea(family);
  const entry = catalogue.entries.get(capability);
  return entry !== undefined && isOfferedArea(entry.area);
}

/** The registered capabilities that decide approval requests or learning proposals. */
export function decidingCatalogue(): string[] {
  return capabilityCatalogue()
    .filter((c) => c.decides)
    .map((c) => c.capability);
}

/**
 * Those of `requested` that can decide approval requests or learning proposals: a deciding
 * capability (`deciding`, the catalogue's unless given: the console passes the list its page
 * received), or a family covering one (`svc_api:approvals:*`, `svc_api:*`).
 */
export function decidingCapabilities(
  requested: readonly string[],
  deciding: readonly string[] = decidingCatalogue(),
): string[] {
  return requested.filter((r) => deciding.some((d) => covers(r, d)));
}

/** Every read capability (`svc_api:<area>:read`) of the catalogue. */
export function readCapabilities(): string[] {
  return capabilityCatalogue()
    .filter((c) => c.capability.endsWith(":read"))
    .map((c) => c.capability);
}

export interface CapabilityGroup {
  area: string;
  title: string;
  capabilities: { capability: string; description: string; decides?: true }[];
}

/** The offered catalogue grouped by area, for pickers and docs (families first); `offered` as the root computes it, or the process's offer. */
export function capabilityGroups(offered: ReadonlySet<string> | undefined = catalogue.offered): CapabilityGroup[] {
  return [
    { area: "all", title: "Everything", capabilities: [capabilityFamilies()[0]!] },
    ...[...catalogue.titles]
      .filter(([area]) => isOfferedArea(area, offered))
      .map(([area, title]) => ({
        area,
        title,
        capabilities: capabilityCatalogue()
          .filter((c) => c.area === area)
          .map(({ capability, description, decides }) => ({
            capability,
            description,
            ...(decides ? { decides } : {}),
          })),
      })),
  ];
}
