import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";
import { ExecutionStatus } from "./schemas";

/** The executions area's part of the catalogues. */
export const executionContributions = {
  capabilities: {
    areas: { executions: "Executions" },
    capabilities: [
      capability("executions", "read", "List and read executions."),
      capability("executions", "write", "Cancel executions."),
    ],
  },
  platformEvents: [
    {
      pattern: "execution.*",
      readCapability: "svc_api:executions:read",
      description: "executions: completed, failed (the AsyncExecution, result included)",
      types: ["execution.completed", "execution.failed"],
    },
  ],
  // The executions gauge reports each status at 0 when no execution has it.
  metricSeries: { executionStatuses: ExecutionStatus.options },
  nav: [{ href: "/executions", label: "Executions", section: "Run", icon: "ListChecks" }],
} satisfies Contributions;
