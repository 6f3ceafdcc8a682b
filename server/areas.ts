import type { AnyRouter } from "@trpc/server";
import { agentOperations } from "./agents/operations";
import { cancelApprovalsOfRevokedDelegations } from "./approvals/cancelApproval";
import { approvalOperations } from "./approvals/operations";
import { approvalsRouter } from "./approvals/router";
import { approvalTasks } from "./approvals/tasks";
import { registerApprovalWaiter, type ApprovalWaiter } from "./approvals/waiters";
import { agentsRouter } from "./agents/router";
import { agentJobKinds } from "./agents/tasks";
import { complianceOperations } from "./compliance/operations";
import { complianceTasks } from "./compliance/tasks";
import { controlPlaneOperations } from "./controlPlane/operations";
import { controlPlaneRouter } from "./controlPlane/router";
import { registerSubscriptionDispatcher, type SubscriptionDispatcher } from "./events/dispatch";
import { eventOperations } from "./events/operations";
import { registerPlatformEventGroups } from "./events/platformEventTypes";
import { eventsRouter } from "./events/router";
import { eventBridgeEntries } from "./events/tasks";
import { dispatchToTrigger } from "./events/triggers";
import { cancelRunsOfRevokedDelegations } from "./executions/executions";
import { approvalBridgeEntries, executionWaiter } from "./executions/executionWaiter";
import { executionOperations } from "./executions/operations";
import { executionsRouter } from "./executions/router";
import { executionJobKinds } from "./executions/tasks";
import type { Operation } from "./http/operation";
import { registerOperations } from "./http/operationRegistry";
import { idempotencyTasks } from "./http/tasks";
import { capabilityAreaOf, offerCapabilityAreas, registerCapabilities } from "./identity/capabilityCatalogue";
import { registerErrorCodes } from "./errorCatalogue";
import { onDelegationIssued, type IssuanceHook } from "./identity/issuanceHooks";
import { identityOperations } from "./identity/operations";
import { onDelegationsRevoked, type RevocationHook } from "./identity/revocationHooks";
import { identityRouter } from "./identity/router";
import { registerJobKind, registeredJobKinds, type JobKind } from "./jobs";
import { seedMetricSeries } from "./telemetry/metrics";
import { registerLearningApplier, type LearningApplier } from "./learning/appliers";
import { LEARNING_PROPOSAL_WAITER } from "./learning/createProposal";
import { learningOperations } from "./learning/operations";
import { proposalWaiter } from "./learning/proposalWaiter";
import { learningRouter } from "./learning/router";
import { learningTasks } from "./learning/tasks";
import { ledgerTasks } from "./ledger/tasks";
import type { Role } from "./governance/roles";
import { invocationOperations, marketplaceOperations } from "./marketplace/operations";
import { marketplaceRouter } from "./marketplace/router";
import { marketplaceBridgeEntries, marketplaceTasks } from "./marketplace/tasks";
import { membersRouter } from "./members/router";
import { overviewRouter } from "./overview/router";
import { memberTasks } from "./members/tasks";
import { processWide } from "./processWide";
import { promptLearningAppliers } from "./prompts/learningAppliers";
import { delegationNarrowingApplier } from "./identity/narrowingApplier";
import { promptOperations } from "./prompts/operations";
import { promptsRouter } from "./prompts/router";
import { provenanceOperations } from "./provenance/operations";
import { provenanceRouter } from "./provenance/router";
import { reasoningOperations } from "./reasoning/operations";
import { reasoningRouter } from "./reasoning/router";
import { attachRequestedBudget } from "./reasoning/budgets";
import { routingRuleApplier } from "./reasoning/routingRuleApplier";
import { reasoningBridgeEntries, reasoningTasks } from "./reasoning/tasks";
import { registerBridgeEntry, type BridgeHandler } from "./sandbox/bridge";
import { webhookJobKinds } from "./webhooks/tasks";
import { disableWebhooksOfRevokedDelegations, dispatchToWebhook } from "./webhooks/hooks";
import { webhookOperations } from "./webhooks/operations";
import { webhooksRouter } from "./webhooks/router";
import { registerTask, type Task } from "./worker/registry";
import { rateLimitSweep } from "./http/rateLimit";
import { telemetryOperations } from "./telemetry/operations";
import { onRunEnded, type RunEndHook } from "./executions/runEndHooks";
import { settleAgentNode } from "./workflows/agentNodes";
import { approvalNodeWaiter, WORKFLOW_NODE_WAITER } from "./workflows/approvalNodes";
import { cancelWorkflowsOfRevokedDelegations } from "./workflows/cancelWorkflow";
import { registerNodeOperations } from "./workflows/nodeOperations";
import { workflowOperations } from "./workflows/operations";
import { workflowsRouter } from "./workflows/router";
import { workflowJobKinds } from "./workflows/tasks";
// Last: what the areas contribute to the catalogues, after the modules above (whose load order is the
// order of the OpenAPI document's schemas).
import { NAV_SECTIONS, type Contributions, type NavEntry } from "./contributions";
import { agentContributions } from "./agents/contributions";
import { approvalContributions } from "./approvals/contributions";
import { complianceContributions } from "./compliance/contributions";
import { controlPlaneContributions } from "./controlPlane/contributions";
import { eventContributions } from "./events/contributions";
import { executionContributions } from "./executions/contributions";
import { identityContributions } from "./identity/contributions";
import { learningContributions } from "./learning/contributions";
import { marketplaceContributions } from "./marketplace/contributions";
import { memberContributions } from "./members/contributions";
import { promptContributions } from "./prompts/contributions";
import { provenanceContributions } from "./provenance/contributions";
import { reasoningContributions } from "./reasoning/contributions";
import { telemetryContributions } from "./telemetry/contributions";
import { webhookContributions } from "./webhooks/contributions";
import { workflowContributions } from "./workflows/contributions";

export { NAV_SECTIONS, type NavEntry, type NavSection } from "./contributions";

/**
 * One area of the server as the rest of the house sees it: everything the shared mechanisms
 * (the routing table, tRPC, the worker, the job queue, the sandbox, the event bus, revocation)
 * take from it, and what it contributes to the catalogues (capabilities, platform event types,
 * error codes, metric series, navigation: `Contributions`, declared in its own
 * `server/<area>/contributions.ts`). Each list is optional; an area declares what it has.
 */
export interface Area extends Contributions {
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
  /** What it does, in the issuing transaction, when a delegation is derived (server/identity/issuanceHooks.ts). */
  issuanceHooks?: Readonly<Record<string, IssuanceHook>>;
  /** What it does, in the revoking transaction, when delegations are revoked. */
  revocationHooks?: Readonly<Record<string, RevocationHook>>;
  /** What it does, in the transaction that records a run's end, when a run ends (server/executions/runEndHooks.ts). */
  runEndHooks?: Readonly<Record<string, RunEndHook>>;
  /** What a matched subscription of a kind it owns does, in the ingesting transaction. */
  subscriptionDispatchers?: Readonly<Partial<Record<"webhook" | "agent_trigger", SubscriptionDispatcher>>>;
  /**
   * What it does when an approval request it asked for settles, by waiter kind (a paused run is
   * `execution`, a workflow's approval node `workflow_node`): called in the settling transaction.
   */
  approvalWaiters?: Readonly<Record<string, ApprovalWaiter>>;
  /** The kinds of learning proposal whose target it owns (server/learning/appliers.ts). */
  learningAppliers?: readonly LearningApplier[];
}

/**
 * The composition root: every area of the server, named once. Adding an area is its folder
 * (`server/<area>/`), its console pages and one entry here; the routing table, the OpenAPI
 * document, the tRPC root, the worker, the job queue, the sandbox bridge, revocation, the event
 * bus, the capability catalogue, the console's navigation and the e2e page list all read this.
 * The order is the order of the OpenAPI document and of the navigation.
 *
 * The catalogues (capabilities, platform event types, error codes) are what the areas declare in
 * their `contributions.ts`, spread into their entry here; the capability catalogue offers a
 * declared capability area (`svc_api:approvals:*`) only once some operation or procedure here
 * checks one of its capabilities (tests/integration/areas.test.ts holds both to each other).
 */
export const areas = {
  identity: {
    operations: identityOperations,
    router: identityRouter,
    ...identityContributions,
    learningAppliers: [delegationNarrowingApplier],
  },
  controlPlane: {
    operations: controlPlaneOperations,
    router: controlPlaneRouter,
    ...controlPlaneContributions,
  },
  provenance: {
    operations: provenanceOperations,
    router: provenanceRouter,
    ...provenanceContributions,
  },
  ledger: { tasks: ledgerTasks },
  compliance: { operations: complianceOperations, tasks: complianceTasks, ...complianceContributions },
  agents: {
    operations: agentOperations,
    router: agentsRouter,
    jobKinds: agentJobKinds,
    ...agentContributions,
  },
  executions: {
    operations: executionOperations,
    router: executionsRouter,
    jobKinds: executionJobKinds,
    revocationHooks: { executions: cancelRunsOfRevokedDelegations },
    bridge: approvalBridgeEntries,
    approvalWaiters: { execution: executionWaiter },
    ...executionContributions,
  },
  webhooks: {
    operations: webhookOperations,
    router: webhooksRouter,
    jobKinds: webhookJobKinds,
    revocationHooks: { webhooks: disableWebhooksOfRevokedDelegations },
    subscriptionDispatchers: { webhook: dispatchToWebhook },
    ...webhookContributions,
  },
  approvals: {
    operations: approvalOperations,
    router: approvalsRouter,
    tasks: approvalTasks,
    revocationHooks: { approvals: cancelApprovalsOfRevokedDelegations },
    ...approvalContributions,
  },
  events: {
    operations: eventOperations,
    router: eventsRouter,
    bridge: eventBridgeEntries,
    subscriptionDispatchers: { agent_trigger: dispatchToTrigger },
    ...eventContributions,
  },
  marketplace: {
    operations: [...marketplaceOperations, ...invocationOperations],
    router: marketplaceRouter,
    tasks: marketplaceTasks,
    bridge: marketplaceBridgeEntries,
    ...marketplaceContributions,
  },
  workflows: {
    operations: workflowOperations,
    router: workflowsRouter,
    jobKinds: workflowJobKinds,
    revocationHooks: { workflows: cancelWorkflowsOfRevokedDelegations },
    runEndHooks: { workflows: settleAgentNode },
    approvalWaiters: { [WORKFLOW_NODE_WAITER]: approvalNodeWaiter },
    ...workflowContributions,
  },
  reasoning: {
    operations: reasoningOperations,
    router: reasoningRouter,
    bridge: reasoningBridgeEntries,
    tasks: reasoningTasks,
    issuanceHooks: { budgets: attachRequestedBudget },
    learningAppliers: [routingRuleApplier],
    ...reasoningContributions,
  },
  prompts: {
    operations: promptOperations,
    router: promptsRouter,
    learningAppliers: promptLearningAppliers,
    ...promptContributions,
  },
  learning: {
    operations: learningOperations,
    router: learningRouter,
    tasks: learningTasks,
    approvalWaiters: { [LEARNING_PROPOSAL_WAITER]: proposalWaiter },
    ...learningContributions,
  },
  members: {
    router: membersRouter,
    tasks: memberTasks,
    ...memberContributions,
  },
  // GET /metrics (Prometheus); not an area of the domain: the process's own and the database's figures.
  telemetry: { operations: telemetryOperations, ...telemetryContributions },
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
export const areaRouters = Object.fromEntries(
  entries.filter(([, a]) => a.router).map(([name, a]) => [name, a.router]),
) as {
  [K in keyof Areas as Areas[K] extends { router: AnyRouter } ? K : never]: Areas[K] extends { router: infer R }
    ? R
    : never;
};

/** Console pages that belong to no area: the overview first, the documents last. */
const CONSOLE_HOME: NavEntry = { href: "/overview", label: "Overview", icon: "LayoutDashboard" };
const CONSOLE_DOCS: readonly NavEntry[] = [
  { href: "/docs/api", label: "API reference", section: "Reference", icon: "FileCode2" },
  { href: "/docs/errors", label: "Error types", section: "Reference", icon: "TriangleAlert" },
];

/**
 * The console's navigation: the overview, then each section's pages (each area's in the root's
 * order), the documents last.
 */
export const consoleNavigation: readonly NavEntry[] = [
  CONSOLE_HOME,
  ...NAV_SECTIONS.flatMap((section) =>
    [...entries.flatMap(([, a]) => a.nav ?? []), ...CONSOLE_DOCS].filter((n) => n.section === section),
  ),
];

/** The entries `role` sees. */
export function navigationFor(role: Role): NavEntry[] {
  return consoleNavigation.filter((n) => !n.roles || n.roles.includes(role));
}

/** The capabilities each operation and procedure of `list` checks (`svc_api:<area>:<action>`). */
export function checkedCapabilities(list: readonly Area[] = entries.map(([, a]) => a)): string[] {
  const fromOperations = list.flatMap((a) => (a.operations ?? []).map((op) => op.capability));
  const fromProcedures = list.flatMap((a) =>
    Object.values(
      (a.router?._def.procedures ?? {}) as Record<string, { _def?: { meta?: { capability?: string | null } } }>,
    ).map((p) => p._def?.meta?.capability ?? null),
  );
  return [...fromOperations, ...fromProcedures].filter((c): c is string => typeof c === "string");
}

/** The capability areas (`agents`, `events`, …) the catalogue offers: those something here checks. */
export const offeredCapabilityAreas: ReadonlySet<string> = new Set(
  checkedCapabilities()
    .map(capabilityAreaOf)
    .filter((a): a is string => a !== undefined),
);

/**
 * Registers what `list` contributes to the kernel's catalogues: capabilities, platform event
 * groups, error codes. `composeServer` calls it with the root's areas; a test composes a fixture
 * area with it on top of the root (tests/integration/areaFixture.test.ts).
 */
export function registerContributions(list: readonly Contributions[]): void {
  for (const area of list) {
    if (area.capabilities) registerCapabilities(area.capabilities);
    registerPlatformEventGroups(area.platformEvents ?? []);
    if (area.errors) registerErrorCodes(area.errors);
  }
}

/**
 * Fills the process's registries from the root: the /v1 operations, job kinds, periodic tasks,
 * sandbox bridge entries, issuance and revocation hooks, run-end hooks, subscription dispatchers,
 * approval waiters, learning appliers, the operations a workflow node can call, and the areas'
 * contributions (capabilities and the catalogue's offer, platform event groups, error codes,
 * metric series).
 * Every entry point calls it before serving (server/main.ts, the worker, Next.js's
 * instrumentation, the CLI, the tests); it runs once per process, whichever copy of the modules
 * (Next.js bundles its own) calls first, and the registries are the process's (server/processWide.ts).
 * Nothing is registered by importing a module.
 */
export function composeServer(): void {
  const composed = processWide("areas.composed", () => ({ done: false }));
  if (composed.done) return;
  composed.done = true;
  const list = entries.map(([, a]) => a);
  for (const area of list) {
    for (const [kind, definition] of Object.entries(area.jobKinds ?? {})) registerJobKind(kind, definition);
    for (const task of area.tasks ?? []) registerTask(task);
    for (const [name, handler] of Object.entries(area.bridge ?? {})) registerBridgeEntry(name, handler);
    for (const [name, hook] of Object.entries(area.issuanceHooks ?? {})) onDelegationIssued(name, hook);
    for (const [name, hook] of Object.entries(area.revocationHooks ?? {})) onDelegationsRevoked(name, hook);
    for (const [name, hook] of Object.entries(area.runEndHooks ?? {})) onRunEnded(name, hook);
    for (const [kind, dispatcher] of Object.entries(area.subscriptionDispatchers ?? {}))
      registerSubscriptionDispatcher(kind as "webhook" | "agent_trigger", dispatcher);
    for (const [kind, waiter] of Object.entries(area.approvalWaiters ?? {})) registerApprovalWaiter(kind, waiter);
    for (const applier of area.learningAppliers ?? []) registerLearningApplier(applier);
  }
  registerContributions(list);
  // The shared rate limit's past windows (PostgreSQL), swept by whichever worker runs.
  registerTask(rateLimitSweep);
  // The routing table and the OpenAPI document (server/http/operationRegistry.ts).
  registerOperations(areaOperations);
  // A workflow's `svc` nodes call the platform's operations by id.
  registerNodeOperations(areaOperations);
  offerCapabilityAreas(offeredCapabilityAreas);
  seedMetricSeries({
    operations: areaOperations.map((op) => op.id),
    jobKinds: registeredJobKinds(),
    executionStatuses: list.flatMap((a) => a.metricSeries?.executionStatuses ?? []),
  });
}
