import { z } from "zod";
import { processWide } from "../processWide";
import table from "./modelTable.json";
import { ModelCapabilities } from "./schemas";
import { readPricesFile, reasoningSettings } from "./settings";

/**
 * The documented, editable price and capability table (modelTable.json, its `$comment` says how
 * to edit it), with SVC_MODEL_PRICES_FILE's entries over it. A provider's `models` entries and an
 * organization's console edits override it again (catalogue.ts).
 */
const TableEntry = z.object({
  display_name: z.string().optional(),
  description: z.string().optional(),
  input_cost_per_million: z.number().min(0).optional(),
  output_cost_per_million: z.number().min(0).optional(),
  context_length: z.number().int().min(1).optional(),
  features: z.array(z.enum(["streaming", "function_calling", "vision"])).optional(),
  capabilities: ModelCapabilities.partial().optional(),
  status: z.enum(["active", "deprecated", "experimental"]).optional(),
});
export type TableEntry = z.output<typeof TableEntry>;
const Table = z.object({ models: z.record(z.string(), TableEntry) });

const held = processWide("reasoning.modelTable", () => ({ entries: undefined as Map<string, TableEntry> | undefined }));

function entries(): Map<string, TableEntry> {
  if (held.entries) return held.entries;
  const merged = new Map(Object.entries(Table.parse(table).models));
  const file = reasoningSettings().pricesFile;
  if (file) {
    const parsed = Table.safeParse(readPricesFile(file));
    if (!parsed.success)
      throw new Error(
        `SVC_MODEL_PRICES_FILE ${file}: ${parsed.error.issues[0]!.path.join(".")}: ${parsed.error.issues[0]!.message}`,
      );
    for (const [id, entry] of Object.entries(parsed.data.models)) merged.set(id, { ...merged.get(id), ...entry });
  }
  held.entries = merged;
  return merged;
}

/** Forget the loaded table (tests that change SVC_MODEL_PRICES_FILE). */
export function resetModelTable(): void {
  held.entries = undefined;
}

/**
 * The table's entry for a provider's model id: the exact id, else the longest entry that is a
 * prefix of it followed by `-`, `:`, `@` or `.` (so `gpt-4o-mini-2024-07-18` is `gpt-4o-mini`,
 * `llama3.1:8b` is `llama3.1`), after dropping an `org/` prefix (OpenRouter's `openai/gpt-4o`).
 */
export function tableEntryFor(modelId: string): TableEntry | undefined {
  const table = entries();
  const bare = modelId.includes("/") ? modelId.slice(modelId.lastIndexOf("/") + 1) : modelId;
  for (const id of [modelId, bare]) {
    const exact = table.get(id);
    if (exact) return exact;
  }
  let best: string | undefined;
  for (const key of table.keys()) {
    if (bare.length > key.length && bare.startsWith(key) && "-:@.".includes(bare[key.length]!)) {
      if (!best || key.length > best.length) best = key;
    }
  }
  return best ? table.get(best) : undefined;
}
