import type { z } from "zod";
import type { Db } from "../db/client";
import { decryptSecret } from "../signing/webhookSecrets";
import type { ProviderConfig, ProviderModelConfig } from "./schemas";
import { reasoningSettings } from "./settings";

/**
 * The provider registry: SVC_MODEL_PROVIDERS (every organization) and the providers an
 * organization's administrators added in the console (that organization only). A console
 * provider may not take an environment provider's name: model keys (`<provider>/<model_id>`)
 * must name one provider.
 */
export interface Provider {
  /** null for environment providers. */
  id: string | null;
  name: string;
  kind: z.output<typeof ProviderConfig>["kind"];
  baseUrl: string | null;
  /** Opens the API key when a call needs it (console keys are sealed at rest). */
  apiKey(): Promise<string | undefined>;
  hasApiKey: boolean;
  models: z.output<typeof ProviderModelConfig>[] | null;
  source: "environment" | "console";
  createdAt: Date | null;
}

/** The context a console provider's sealed key is bound to: a sealed key copied to another row does not open. */
export const apiKeyContext = (providerId: string) => `reasoning-provider:${providerId}`;

export function environmentProviders(): Provider[] {
  return reasoningSettings().providers.map((p) => ({
    id: null,
    name: p.name,
    kind: p.kind,
    baseUrl: p.base_url ?? null,
    apiKey: async () => p.api_key,
    hasApiKey: p.api_key !== undefined,
    models: p.models ?? null,
    source: "environment",
    createdAt: null,
  }));
}

/** Every provider the organization's calls may use: the environment's first, then its own by name. */
export async function listProviders(db: Db, orgDid: string): Promise<Provider[]> {
  const rows = await db.reasoningProvider.findMany({ where: { orgDid }, orderBy: { name: "asc" } });
  return [
    ...environmentProviders(),
    ...rows.map((r): Provider => ({
      id: r.id,
      name: r.name,
      kind: r.kind as Provider["kind"],
      baseUrl: r.baseUrl,
      apiKey: async () => (r.apiKeySealed ? decryptSecret(r.apiKeySealed, apiKeyContext(r.id)) : undefined),
      hasApiKey: r.apiKeySealed !== null,
      models: (r.models as Provider["models"]) ?? null,
      source: "console",
      createdAt: r.createdAt,
    })),
  ];
}
