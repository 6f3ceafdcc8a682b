import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** Telemetry's part of the catalogues: the Prometheus scrape's capability. */
export const telemetryContributions = {
  capabilities: {
    areas: { metrics: "Metrics" },
    capabilities: [
      capability(
        "metrics",
        "read",
        "Scrape the deployment's Prometheus metrics (GET /metrics): calls, refusals, queues, executions, spend, the ledger. The root organization's keys only.",
      ),
    ],
  },
} satisfies Contributions;
