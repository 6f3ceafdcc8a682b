import type { Contributions } from "../contributions";
import type { ErrorEntry } from "../errorCatalogue";
import { capability } from "../identity/capabilityCatalogue";

/** Its own problem types (/docs/errors lists them after the shared ones). */
const errors = {
  budget_exceeded: {
    status: 402,
    title: "Budget exceeded",
    description:
      "A reasoning call's worst case (its input tokens, counted as an upper bound, plus max_tokens of output at the model's price) does not fit in what the delegation's budget (or a budget of a delegation it derives from) leaves in its period, counting settled calls and the reservations of calls still running. `budget_delegation_id`, `limit_usd`, `period`, `spent_usd`, `reserved_usd`, `remaining_usd` and `required_usd` give the figures. A model without a known price is refused under a budget. The problem's `type` ends in `budget-exceeded`.",
    fix: "Ask for fewer max_tokens, use `budget: optimize` or `minimize` (a cheaper model that fits), wait for the next period, or ask the grantor for a delegation with a larger budget.",
  },
  model_unpriced: {
    status: 402,
    title: "Model has no price",
    description:
      "The caller's delegation (or one it derives from) has a budget, and the model the call pinned, or every model that could take it, has no known price, so its cost could not be reserved against the budget. `unpriced_models` lists them (`<provider>/<model_id>`).",
    fix: "Give the model a price: `input_cost_per_million` and `output_cost_per_million` in its provider's `models` entry (SVC_MODEL_PROVIDERS, or the price fields of the console's Add provider form under Reasoning → Models), or in SVC_MODEL_PRICES_FILE; or call with a key that has no budget.",
    remediation: [
      'Price the model in its provider\'s entry: SVC_MODEL_PROVIDERS=[{"name":"…","kind":"openai-compatible","base_url":"…","models":[{"model_id":"<model>","input_cost_per_million":0.5,"output_cost_per_million":1.5}]}], or a JSON file named by SVC_MODEL_PRICES_FILE, and restart svc.',
      "Or, as an administrator, remove the provider and add it again in the console (Reasoning → Models → Add provider) with its models' prices.",
      "Or make the call with a delegation that has no budget.",
    ],
  },
  reasoning_unavailable: {
    status: 503,
    title: "No model provider",
    description:
      "No model provider is configured, or none of the configured providers offers an active model (their model lists could not be read, or every model is deprecated).",
    fix: "Configure a provider: SVC_MODEL_PROVIDERS, or an administrator adds one in the console under Reasoning → Models.",
    remediation: [
      'Set SVC_MODEL_PROVIDERS to a JSON array of providers, e.g. [{"name":"openai","kind":"openai-compatible","base_url":"https://api.openai.com/v1","api_key":"sk-…"}] (Ollama: base_url http://localhost:11434/v1, listed in SVC_OUTBOUND_ALLOW), and restart svc.',
      "Or, as an administrator, add a provider in the console: Reasoning → Models → Add provider.",
    ],
  },
  model_call_failed: {
    status: 502,
    title: "Model call failed",
    description:
      "Every model of the call's fallback chain failed: a provider error, a timeout (SVC_REASONING_TIMEOUT_MS) or a rate limit. `attempts[]` gives each model and why; the call is recorded (GET /v1/reasoning/calls/{id}, `call_id`) and its budget reservation released.",
    fix: "Retry later, pin another model, or check the providers in the console.",
  },
} as const satisfies Record<string, ErrorEntry>;

declare module "../errorCatalogue" {
  // Its codes, typed for `domainError` (see AreaErrorCodes).
  interface AreaErrorCodes extends Record<keyof typeof errors, true> {}
}

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
  errors,
} satisfies Contributions;
