import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { providerProblems } from "./catalogue";
import { listProviders } from "./providers";
import type { ProviderList } from "./schemas";

/** The console's provider list: every provider the organization's calls may use, keys never shown. */
export async function listProviderViews(db: Db, principal: Principal): Promise<z.input<typeof ProviderList>> {
  const [providers, problems] = await Promise.all([
    listProviders(db, principal.orgDid),
    providerProblems(db, principal.orgDid),
  ]);
  return {
    data: providers.map((p) => ({
      id: p.id,
      name: p.name,
      kind: p.kind,
      base_url: p.baseUrl,
      has_api_key: p.hasApiKey,
      source: p.source,
      models: p.models,
      created_at: p.createdAt?.toISOString() ?? null,
      problem: problems[p.name] ?? null,
    })),
  };
}
