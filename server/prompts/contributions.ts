import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The prompts area's part of the catalogues. */
export const promptContributions = {
  capabilities: {
    areas: { prompts: "Prompts" },
    capabilities: [
      capability("prompts", "read", "List, read, render and score prompts."),
      capability("prompts", "publish", "Publish prompt versions."),
    ],
  },
  nav: [{ href: "/prompts", label: "Prompts", section: "Models", icon: "FileText" }],
} satisfies Contributions;
