import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The control plane's part of the catalogues. */
export const controlPlaneContributions = {
  capabilities: {
    areas: { cp: "Control plane" },
    capabilities: [
      capability("cp", "read", "Read the caller's organization and the organizations it created."),
      capability("cp", "write", "Create organizations and update those the caller created."),
    ],
  },
  nav: [{ href: "/organizations", label: "Organizations", section: "Govern", icon: "Building2" }],
} satisfies Contributions;
