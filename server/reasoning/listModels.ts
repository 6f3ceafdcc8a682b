import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { catalogue, type CatalogueModel } from "./catalogue";
import { measuredPerformance, UNMEASURED, type Measured } from "./measuredPerformance";
import type { ModelInfo, ModelListResponse } from "./schemas";

/** A catalogue model as the API shows it (`ModelInfo`), with its measured performance. */
export function modelInfo(m: CatalogueModel, measured: Measured = UNMEASURED): z.input<typeof ModelInfo> {
  return {
    model_id: m.modelId,
    provider: m.provider.name,
    display_name: m.displayName,
    description: m.description,
    capabilities: m.capabilities,
    context_length: m.contextLength,
    supports_streaming: m.features.streaming,
    supports_function_calling: m.features.functionCalling,
    supports_vision: m.features.vision,
    performance: {
      avg_latency_ms: measured.avgLatencyMs,
      reliability: Math.round(measured.reliability * 1000) / 1000,
      success_rate: Math.round(measured.successRate * 1000) / 1000,
    },
    cost: { input_cost_per_million: m.inputCostPerMillion, output_cost_per_million: m.outputCostPerMillion },
    status: m.status,
  };
}

/** `GET /v1/reasoning/models`: the caller's organization's catalogue, performance measured from its calls. */
export async function listModels(db: Db, principal: Principal): Promise<z.input<typeof ModelListResponse>> {
  const [models, measured] = await Promise.all([
    catalogue(db, principal.orgDid),
    measuredPerformance(db, principal.orgDid),
  ]);
  return { models: models.map((m) => modelInfo(m, measured.get(m.key))) };
}
