import type { AnyRouter } from "@trpc/server";
import { agentOperations } from "./agents/operations";
import { agentsRouter } from "./agents/router";
import { agentJobKinds } from "./agents/tasks";
import { complianceOperations } from "./compliance/operations";
import { complianceTasks } from "./compliance/tasks";
import { controlPlaneOperations } from "./controlPlane/operations";
import { controlPlaneRouter } from "./controlPlane/router";
import { registerSubscriptionDispatcher, type SubscriptionDispatcher } from "./events/dispatch";
import { eventOperations } from "./events/operations";
import { registerPlatformEventTypes } from "./events/platformEventTypes";
import { eventsRouter } from "./events/router";
import { eventBridgeEntries } from "./events/tasks";
import { dispatchToTrigger } from "./events/triggers";
import { cancelRunsOfRevokedDelegations } from "./executions/executions";
import { executionOperations } from "./executions/operations";
import { executionsRouter } from "./executions/router";
import { executionJobKinds } from "./executions/tasks";
import type { Operation } from "./http/operation";
import { idempotencyTasks } from "./http/tasks";
import { capabilityAreaOf, offerCapabilityAreas } from "./identity/capabilityCatalogue";
import { identityOperations } from "./identity/operations";
import { onDelegationsRevoked, type RevocationHook } from "./identity/revocationHooks";
import { identityRouter } from "./identity/router";
import { registerJobKind, type JobKind } from "./jobs";
import { ledgerTasks } from "./ledger/tasks";
import type { Role } from "./members/roles";
import { membersRouter } from "./members/router";
import { overviewRouter } from "./overview/router";
import { memberTasks } from "./members/tasks";
import { processWide } from "./processWide";
import { provenanceOperations } from "./provenance/operations";
import { provenanceRouter } from "./provenance/router";
import { registerBridgeEntry, type BridgeHandler } from "./sandbox/bridge";
import { webhookJobKinds } from "./webhooks/tasks";
import { disableWebhooksOfRevokedDelegations, dispatchToWebhook } from "./webhooks/hooks";
import { webhookOperations } from "./webhooks/operations";
import { webhooksRouter } from "./webhooks/router";
import { registerTask, type Task } from "./worker/registry";

/** A console page in the navigation: who sees it, and the lucide icon beside its label. */
export interface NavEntry {
  href: string;
  label: string;
  /** A lucide-react icon name (`Bot`, `ListChecks`, …). */
  icon: string;
  /** The roles that see the entry; every role when absent (the approval inbox is an approver's page). */
  roles?: readonly Role[];
}

/**
 * One area of the server as the rest of the house sees it: everything the shared mechanisms
 * (the routing table, tRPC, the worker, the job queue, the sandbox, the event bus, revocation)
 * take from it. Each list is optional; an area declares what it has.
 */
export interface Area {
  /** Its /v1 operations (server/<area>/operations.ts): the routing table and the OpenAPI document. */
  operations?: readonly Operation[];
  /** Its tRPC router (server/<area>/router.ts), mounted under the area's key. */
  router?: AnyRouter;
  /** Its durable job kinds, by kind (server/<area>/tasks.ts). */
  jobKinds?: Readonly<Record<string, JobKind>>;
  /** Its periodic tasks (server/<area>/tasks.ts). */
  tasks?: readonly Task[];
  /** The `ctx.<name>` entries it offers sandboxed runs. */
  bridge?: Readonly<Record<string, BridgeHandler>>;
  /** What it does, in the revoking transaction, when delegations are revoked. */
  revocationHooks?: Readonly<Record<string, RevocationHook>>;
  /** What a matched subscription of a kind it owns does, in the ingesting transaction. */
  subscriptionDispatchers?: Readonly<Partial<Record<"webhook" | "agent_trigger", SubscriptionDispatcher>>>;
  /** The platform event types it raises (the README's event catalogue). */
  platformEvents?: readonly string[];
  /** Its pages in the console's navigation. */
  nav?: readonly NavEntry[];
}

/**
 * The composition root: every area of the server, named once. Adding an area is its folder
 * (`server/<area>/`), its console pages and one entry here; the routing table, the OpenAPI
 * document, the tRPC root, the worker, the job queue, the sandbox bridge, revocation, the event
 * bus, the capability catalogue, the console's navigation and the e2e page list all read this.
 * The order is the order of the OpenAPI document and of the navigation.
 *
 * The capabilities an area brings are those its operations and procedures check: the catalogue
 * offers a capability area (`svc_api:approvals:*`) only once some operation or procedure here
 * checks one of its capabilities.
 */
export const areas = {
  identity: {
    operations: identityOperations,
    router: identityRouter,
    nav: [
      { href: "/passports", label: "Passports", icon: "Fingerprint" },
      { href: "/keys", label: "API keys & delegations", icon: "KeyRound" },
    ],
  },
  controlPlane: { operations: controlPlaneOperations, router: controlPlaneRouter, nav: [{ href: "/organizations", label: "Organizations", icon: "Building2" }] },
  provenance: { operations: provenanceOperations, router: provenanceRouter, nav: [{ href: "/provenance", label: "Provenance", icon: "Activity" }] },
  ledger: { tasks: ledgerTasks },
  compliance: { operations: complianceOperations, tasks: complianceTasks },
  agents: {
    operations: agentOperations,
    router: agentsRouter,
    jobKinds: agentJobKinds,
    platformEvents: ["agent.deployed", "agent.activated", "agent.deactivated"],
    nav: [{ href: "/agents", label: "Agents", icon: "Bot" }],
  },
  executions: {
    operations: executionOperations,
    router: executionsRouter,
    jobKinds: executionJobKinds,
    revocationHooks: { executions: cancelRunsOfRevokedDelegations },
    platformEvents: ["execution.completed", "execution.failed"],
    nav: [{ href: "/executions", label: "Executions", icon: "ListChecks" }],
  },
  webhooks: {
    operations: webhookOperations,
    router: webhooksRouter,
    jobKinds: webhookJobKinds,
    revocationHooks: { webhooks: disableWebhooksOfRevokedDelegations },
    subscriptionDispatchers: { webhook: dispatchToWebhook },
    platformEvents: ["webhook.disabled"],
    nav: [{ href: "/webhooks", label: "Webhooks", icon: "Webhook" }],
  },
  events: {
    operations: eventOperations,
    router: eventsRouter,
    bridge: eventBridgeEntries,
    subscriptionDispatchers: { agent_trigger: dispatchToTrigger },
    nav: [{ href: "/events", label: "Events", icon: "Radio" }],
  },
  members: { router: membersRouter, tasks: memberTasks, nav: [{ href: "/members", label: "Members", icon: "Users", roles: ["admin"] }] },
  // The console's dashboard (its page is the navigation's home, CONSOLE_HOME below).
  overview: { router: overviewRouter },
  // Not an area: the gate's idempotency keys, expired like any area's rows.
  http: { tasks: idempotencyTasks },
} satisfies Record<string, Area>;

type Areas = typeof areas;
const entries = Object.entries(areas) as [keyof Areas, Area][];

/** Every governed /v1 operation, in the root's order. */
export const areaOperations: readonly Operation[] = entries.flatMap(([, a]) => a.operations ?? []);

/** Every area's tRPC router, under the area's name. */
export const areaRouters = Object.fromEntries(entries.filter(([, a]) => a.router).map(([name, a]) => [name, a.router])) as {
  [K in keyof Areas as Areas[K] extends { router: AnyRouter } ? K : never]: Areas[K] extends { router: infer R } ? R : never;
};

/** The platform event types the areas raise. */
export const platformEventTypes: readonly string[] = entries.flatMap(([, a]) => a.platformEvents ?? []);

/** Console pages that belong to no area: the overview first, the documents last. */
const CONSOLE_HOME: NavEntry = { href: "/overview", label: "Overview", icon: "LayoutDashboard" };
const CONSOLE_DOCS: readonly NavEntry[] = [
  { href: "/docs/api", label: "API reference", icon: "FileCode2" },
  { href: "/docs/errors", label: "Error types", icon: "TriangleAlert" },
];

/** The console's navigation: the overview, each area's pages in the root's order, the documents. */
export const consoleNavigation: readonly NavEntry[] = [CONSOLE_HOME, ...entries.flatMap(([, a]) => a.nav ?? []), ...CONSOLE_DOCS];

/** The entries `role` sees. */
export function navigationFor(role: Role): NavEntry[] {
  return consoleNavigation.filter((n) => !n.roles || n.roles.includes(role));
}

/** The capabilities each operation and procedure checks (`svc_api:<area>:<action>`). */
function checkedCapabilities(): string[] {
  const fromOperations = areaOperations.map((op) => op.capability);
  const fromProcedures = entries.flatMap(([, a]) =>
    Object.values((a.router?._def.procedures ?? {}) as Record<string, { _def?: { meta?: { capability?: string | null } } }>).map((p) => p._def?.meta?.capability ?? null),
  );
  return [...fromOperations, ...fromProcedures].filter((c): c is string => typeof c === "string");
}

/** The capability areas (`agents`, `events`, …) the catalogue offers: those something here checks. */
export const offeredCapabilityAreas: ReadonlySet<string> = new Set(checkedCapabilities().map(capabilityAreaOf).filter((a): a is string => a !== undefined));

/**
 * Fills the process's registries from the root: job kinds, periodic tasks, sandbox bridge
 * entries, revocation hooks, subscription dispatchers, platform event types and the capability
 * catalogue's offer.
 * Every entry point calls it before serving (server/main.ts, the worker, Next.js's
 * instrumentation, the CLI, the tests); it runs once per process, whichever copy of the modules
 * (Next.js bundles its own) calls first, and the registries are the process's (server/processWide.ts).
 * Nothing is registered by importing a module.
 */
export function composeServer(): void {
  const composed = processWide("areas.composed", () => ({ done: false }));
  if (composed.done) return;
  composed.done = true;
  for (const [, area] of entries) {
    for (const [kind, definition] of Object.entries(area.jobKinds ?? {})) registerJobKind(kind, definition);
    for (const task of area.tasks ?? []) registerTask(task);
    for (const [name, handler] of Object.entries(area.bridge ?? {})) registerBridgeEntry(name, handler);
    for (const [name, hook] of Object.entries(area.revocationHooks ?? {})) onDelegationsRevoked(name, hook);
    for (const [kind, dispatcher] of Object.entries(area.subscriptionDispatchers ?? {})) registerSubscriptionDispatcher(kind as "webhook" | "agent_trigger", dispatcher);
  }
  registerPlatformEventTypes(platformEventTypes);
  offerCapabilityAreas(offeredCapabilityAreas);
}
