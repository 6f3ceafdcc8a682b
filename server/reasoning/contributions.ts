import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** Reasoning's part of the catalogues: models, reasoning requests and benchmarks. */
export const reasoningContributions = {
  capabilities: {
    areas: { models: "Models", reasoning: "Reasoning", benchmarks: "Benchmarks" },
    capabilities: [
      capability("models", "read", "List models and their performance; list benchmarks."),
      capability("models", "admin", "Add and remove model providers; change models' prices and status."),
      capability("reasoning", "think", "Run reasoning requests."),
      capability("benchmarks", "write", "Submit benchmarks."),
    ],
  },
  nav: [
    { href: "/reasoning/models", label: "Models", section: "Models", icon: "Cpu" },
    { href: "/reasoning/playground", label: "Playground", section: "Models", icon: "FlaskConical" },
    { href: "/reasoning/spend", label: "Spend", section: "Models", icon: "Wallet" },
    { href: "/reasoning/benchmarks", label: "Benchmarks", section: "Models", icon: "ChartColumn" },
  ],
} satisfies Contributions;
