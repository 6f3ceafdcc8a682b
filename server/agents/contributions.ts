import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The agents area's part of the catalogues. */
export const agentContributions = {
  capabilities: {
    areas: { agents: "Agents" },
    capabilities: [
      capability("agents", "read", "List agents, read their status, and match capabilities."),
      capability("agents", "deploy", "Deploy agents and new versions of them."),
      capability("agents", "invoke", "Invoke agents."),
      capability("agents", "manage", "Activate and deactivate agents."),
    ],
  },
  platformEvents: [
    {
      pattern: "agent.*",
      readCapability: "svc_api:agents:read",
      description: "agents: deployed, activated, deactivated",
      types: ["agent.deployed", "agent.activated", "agent.deactivated"],
    },
  ],
  nav: [{ href: "/agents", label: "Agents", section: "Run", icon: "Bot" }],
} satisfies Contributions;
