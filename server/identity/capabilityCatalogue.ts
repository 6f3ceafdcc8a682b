import { processWide } from "../processWide";
import { covers } from "./capabilities";

/**
 * Every capability of the API contract's vocabulary, with what it allows: the one list that the
 * role definitions (server/members/roles.ts), the console's key picker, the OpenAPI document and
 * the docs read, and that every capability in a request is checked against. Pure data (no
 * node-only import): console forms import it too.
 *
 * The service offers a capability only once its area exists: the composition root
 * (server/areas.ts) names the capability areas its operations and procedures check
 * (`offerCapabilityAreas`), and the others (approvals, workflows, marketplace, reasoning… until
 * they are built) are unknown: refused in a request, absent from the key picker and from the
 * session exchange's default grant. Before the root has spoken (a console form in the browser, a
 * unit test) the whole vocabulary is known.
 */
export const CAPABILITY_AREAS = {
  passports: "Passports",
  delegations: "Delegations",
  provenance: "Provenance",
  agents: "Agents",
  approvals: "Approvals",
  executions: "Executions",
  workflows: "Workflows",
  events: "Events and webhooks",
  marketplace: "Marketplace",
  compliance: "Compliance",
  models: "Models",
  reasoning: "Reasoning",
  benchmarks: "Benchmarks",
  prompts: "Prompts",
  cp: "Control plane",
  learning: "Learning",
  members: "Console members",
  metrics: "Metrics",
} as const;

export type CapabilityArea = keyof typeof CAPABILITY_AREAS;

export interface CapabilityEntry {
  capability: `svc_api:${CapabilityArea}:${string}`;
  area: CapabilityArea;
  description: string;
  /**
   * It decides what people are asked to approve (approval requests, learning proposals): a
   * console session mints a key or token holding it (or a family covering it) only with a fresh
   * passkey assertion of its own (server/identity/passkeyStepUp.ts).
   */
  decides?: true;
}

const entry = <A extends CapabilityArea>(
  area: A,
  action: string,
  description: string,
  flags: { decides?: true } = {},
): CapabilityEntry => ({
  capability: `svc_api:${area}:${action}`,
  area,
  description,
  ...flags,
});

export const CAPABILITY_CATALOGUE: readonly CapabilityEntry[] = [
  entry("passports", "read", "List and read the organization's passports."),
  entry("passports", "write", "Register passports and change their name or description."),
  entry(
    "passports",
    "admin",
    "Set passports' verification and identity tiers, and delegate to passports of higher tiers.",
  ),
  entry("delegations", "read", "List and read delegations and revocation records."),
  entry(
    "delegations",
    "write",
    "Issue delegation tokens and revoke the caller's own delegations and those derived from them.",
  ),
  entry("delegations", "admin", "Revoke any delegation of the organization."),
  entry("provenance", "read", "Read provenance records, checkpoints, proofs and exports."),
  entry("agents", "read", "List agents, read their status, and match capabilities."),
  entry("agents", "deploy", "Deploy agents and new versions of them."),
  entry("agents", "invoke", "Invoke agents."),
  entry("agents", "manage", "Activate and deactivate agents."),
  entry("approvals", "read", "List and read approval requests."),
  entry("approvals", "write", "Create and cancel approval requests."),
  entry("approvals", "respond", "Approve, reject or delegate approval requests.", { decides: true }),
  entry("approvals", "admin", "Override approval decisions."),
  entry("executions", "read", "List and read executions."),
  entry("executions", "write", "Cancel executions."),
  entry("workflows", "read", "List and read workflows."),
  entry("workflows", "write", "Start workflows."),
  entry("events", "read", "List events, webhooks and deliveries."),
  entry("events", "write", "Ingest and emit events; create and delete webhooks."),
  entry("marketplace", "read", "Browse connectors, installations and ratings."),
  entry("marketplace", "install", "Install, update and uninstall connectors."),
  entry("marketplace", "rate", "Rate connectors."),
  entry("marketplace", "invoke", "Invoke installed connectors."),
  entry("compliance", "read", "Read the deployment's compliance report and walled-garden status."),
  entry("models", "read", "List models and their performance; list benchmarks."),
  entry("models", "admin", "Add and remove model providers; change models' prices and status."),
  entry("reasoning", "think", "Run reasoning requests."),
  entry("benchmarks", "write", "Submit benchmarks."),
  entry("prompts", "read", "List, read, render and score prompts."),
  entry("prompts", "publish", "Publish prompt versions."),
  entry("cp", "read", "Read the caller's organization and the organizations it created."),
  entry("cp", "write", "Create organizations and update those the caller created."),
  entry("learning", "read", "List and read learning proposals."),
  entry("learning", "propose", "Propose learning changes."),
  entry("learning", "decide", "Approve, reject, apply and roll back learning proposals.", { decides: true }),
  entry("members", "read", "List the console's members (people)."),
  entry("members", "write", "Invite people to the console and revoke their access."),
  entry(
    "metrics",
    "read",
    "Scrape the deployment's Prometheus metrics (GET /metrics): calls, refusals, queues, executions, spend, the ledger. The root organization's keys only.",
  ),
];

/** Families a capability list may name: everything, or one area. */
export const CAPABILITY_FAMILIES: readonly { capability: string; description: string }[] = [
  { capability: "svc_api:*", description: "Every capability, of every area (an administrator)." },
  ...Object.entries(CAPABILITY_AREAS).map(([area, title]) => ({
    capability: `svc_api:${area}:*`,
    description: `Every ${title.toLowerCase()} capability.`,
  })),
];

const KNOWN = new Set<string>([
  ...CAPABILITY_CATALOGUE.map((c) => c.capability),
  ...CAPABILITY_FAMILIES.map((f) => f.capability),
]);

// The capability areas the composition root offers (undefined until it has spoken).
const offer = processWide("identity.offeredCapabilityAreas", () => ({
  areas: undefined as ReadonlySet<string> | undefined,
}));

/** The area of `svc_api:<area>:…`, or undefined (`svc_api:*`, another namespace). */
export function capabilityAreaOf(capability: string): string | undefined {
  return /^svc_api:([a-z0-9_]+):/.exec(capability)?.[1];
}

/** Called by the composition root (server/areas.ts) only: the capability areas this service has operations for. */
export function offerCapabilityAreas(areas: Iterable<string>): void {
  offer.areas = new Set(areas);
}

/** Whether the service offers capabilities of `area` (every area before the root has spoken). */
export function isOfferedArea(area: string, offered: ReadonlySet<string> | undefined = offer.areas): boolean {
  return !offered || offered.has(area);
}

/** Whether a capability (or family) is one the catalogue lists and the service offers. */
export function isKnownCapability(capability: string): boolean {
  if (!KNOWN.has(capability)) return false;
  const area = capabilityAreaOf(capability);
  return area === undefined || isOfferedArea(area);
}

const DECIDING: readonly string[] = CAPABILITY_CATALOGUE.filter((c) => c.decides).map((c) => c.capability);

/**
 * Those of `requested` that can decide approval requests or learning proposals: a deciding
 * capability of the catalogue, or a family covering one (`svc_api:approvals:*`, `svc_api:*`).
 */
export function decidingCapabilities(requested: readonly string[]): string[] {
  return requested.filter((r) => DECIDING.some((d) => covers(r, d)));
}

/** Every read capability (`svc_api:<area>:read`) of the catalogue. */
export const READ_CAPABILITIES: readonly string[] = CAPABILITY_CATALOGUE.filter((c) =>
  c.capability.endsWith(":read"),
).map((c) => c.capability);

export interface CapabilityGroup {
  area: string;
  title: string;
  capabilities: { capability: string; description: string }[];
}

/** The offered catalogue grouped by area, for pickers and docs (families first); `offered` as the root computes it, or the process's offer. */
export function capabilityGroups(offered: ReadonlySet<string> | undefined = offer.areas): CapabilityGroup[] {
  return [
    { area: "all", title: "Everything", capabilities: [CAPABILITY_FAMILIES[0]!] },
    ...Object.entries(CAPABILITY_AREAS)
      .filter(([area]) => isOfferedArea(area, offered))
      .map(([area, title]) => ({
        area,
        title,
        capabilities: CAPABILITY_CATALOGUE.filter((c) => c.area === area).map(({ capability, description }) => ({
          capability,
          description,
        })),
      })),
  ];
}
