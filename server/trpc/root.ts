import { agentsRouter } from "../agents/router";
import { controlPlaneRouter } from "../controlPlane/router";
import { executionsRouter } from "../executions/router";
import { eventsRouter } from "../events/router";
import { identityRouter } from "../identity/router";
import { membersRouter } from "../members/router";
import { overviewRouter } from "../overview/router";
import { provenanceRouter } from "../provenance/router";
import { webhooksRouter } from "../webhooks/router";
import { createCallerFactory, router } from "./init";

/** Every area's router, registered once. */
export const appRouter = router({
  identity: identityRouter,
  controlPlane: controlPlaneRouter,
  members: membersRouter,
  provenance: provenanceRouter,
  agents: agentsRouter,
  executions: executionsRouter,
  webhooks: webhooksRouter,
  events: eventsRouter,
  overview: overviewRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
