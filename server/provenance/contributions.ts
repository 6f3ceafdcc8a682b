import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** Provenance's part of the catalogues. */
export const provenanceContributions = {
  capabilities: {
    areas: { provenance: "Provenance" },
    capabilities: [capability("provenance", "read", "Read provenance records, checkpoints, proofs and exports.")],
  },
  nav: [{ href: "/provenance", label: "Provenance", section: "Govern", icon: "Activity" }],
} satisfies Contributions;
