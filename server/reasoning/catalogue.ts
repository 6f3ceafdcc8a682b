import type { z } from "zod";
import type { Db } from "../db/client";
import { modelsOf } from "./discoverModels";
import { tableEntryFor } from "./modelTable";
import { listProviders, type Provider } from "./providers";
import type { ModelCapabilities, ModelStatus } from "./schemas";

/** One model of an organization's catalogue: a provider's model with its price, scores and status. */
export interface CatalogueModel {
  /** `<provider>/<model_id>`: unique in the catalogue. */
  key: string;
  modelId: string;
  provider: Provider;
  displayName: string;
  description: string;
  capabilities: z.output<typeof ModelCapabilities>;
  contextLength: number;
  features: { streaming: boolean; functionCalling: boolean; vision: boolean };
  inputCostPerMillion: number;
  outputCostPerMillion: number;
  /** Whether a price is known (table, provider configuration or console); unpriced models cost 0 and are never used under a budget. */
  priced: boolean;
  status: z.output<typeof ModelStatus>;
}

const DEFAULT_CONTEXT_LENGTH = 8192;
const UNKNOWN_SCORE = 0.5;
const SCORES = [
  "reasoning",
  "coding",
  "summarization",
  "multilingual",
  "math_reasoning",
  "creative_writing",
  "instruction_following",
] as const;

/**
 * The organization's catalogue: for each provider (environment first, then its own), each of its
 * models, priced and scored by, in increasing precedence, the table (modelTable.json and
 * SVC_MODEL_PRICES_FILE), the provider's `models` entry, and the organization's console edits.
 * A model with no price anywhere is `experimental` (routing uses active models) unless an edit
 * says otherwise.
 */
export async function catalogue(db: Db, orgDid: string): Promise<CatalogueModel[]> {
  const [providers, edits] = await Promise.all([
    listProviders(db, orgDid),
    db.reasoningModel.findMany({ where: { orgDid } }),
  ]);
  const editOf = new Map(edits.map((e) => [e.modelKey, e]));
  const lists = await Promise.all(providers.map((p) => modelsOf(p)));
  const out: CatalogueModel[] = [];
  providers.forEach((provider, i) => {
    for (const modelId of lists[i]!.models) {
      const table = tableEntryFor(modelId);
      const configured = provider.models?.find((m) => m.model_id === modelId);
      const key = `${provider.name}/${modelId}`;
      const edit = editOf.get(key);
      const input = edit?.inputCostPerMillion ?? configured?.input_cost_per_million ?? table?.input_cost_per_million;
      const output =
        edit?.outputCostPerMillion ?? configured?.output_cost_per_million ?? table?.output_cost_per_million;
      const priced = input !== undefined && output !== undefined;
      const capabilities = Object.fromEntries(
        SCORES.map((s) => [s, configured?.capabilities?.[s] ?? table?.capabilities?.[s] ?? UNKNOWN_SCORE]),
      ) as CatalogueModel["capabilities"];
      const features = new Set(table?.features ?? ["streaming"]);
      out.push({
        key,
        modelId,
        provider,
        displayName: configured?.display_name ?? table?.display_name ?? modelId,
        description: table?.description ?? `${modelId} from ${provider.name}`,
        capabilities,
        contextLength: configured?.context_length ?? table?.context_length ?? DEFAULT_CONTEXT_LENGTH,
        features: {
          streaming: features.has("streaming"),
          functionCalling: features.has("function_calling"),
          vision: features.has("vision"),
        },
        inputCostPerMillion: input ?? 0,
        outputCostPerMillion: output ?? 0,
        priced,
        status:
          (edit?.status as CatalogueModel["status"] | null) ?? table?.status ?? (priced ? "active" : "experimental"),
      });
    }
  });
  return out;
}

/** The problems providers have now (a list that could not be read), for the console. */
export async function providerProblems(db: Db, orgDid: string): Promise<Record<string, string>> {
  const providers = await listProviders(db, orgDid);
  const lists = await Promise.all(providers.map((p) => modelsOf(p)));
  return Object.fromEntries(
    providers.flatMap((p, i) => (lists[i]!.error ? [[p.name, lists[i]!.error!] as [string, string]] : [])),
  );
}
