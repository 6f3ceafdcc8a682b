import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The workflows area's part of the catalogues. */
export const workflowContributions = {
  capabilities: {
    areas: { workflows: "Workflows" },
    capabilities: [
      capability("workflows", "read", "List and read workflows."),
      capability("workflows", "write", "Start workflows."),
    ],
  },
  platformEvents: [
    {
      pattern: "workflow.*",
      readCapability: "svc_api:workflows:read",
      description: "workflows: completed, failed",
      types: ["workflow.completed", "workflow.failed"],
    },
  ],
  nav: [{ href: "/workflows", label: "Workflows", section: "Run", icon: "Workflow" }],
} satisfies Contributions;
