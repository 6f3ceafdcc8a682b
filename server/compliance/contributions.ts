import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** Compliance's part of the catalogues. */
export const complianceContributions = {
  capabilities: {
    areas: { compliance: "Compliance" },
    capabilities: [
      capability("compliance", "read", "Read the deployment's compliance report and walled-garden status."),
    ],
  },
} satisfies Contributions;
