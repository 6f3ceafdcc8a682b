import type { z } from "zod";
import type { Db } from "../db/client";
import { Conflict } from "../errors";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";
import { encryptSecret } from "../signing/webhookSecrets";
import { forgetDiscoveredModels } from "./discoverModels";
import { forgetRoutingCatalogue } from "./routingCatalogue";
import { apiKeyContext, environmentProviders } from "./providers";
import type { ProviderAddRequest, ProviderView } from "./schemas";

/**
 * Adds a model provider for the caller's organization (the console's Providers form). The base
 * URL is checked now like any outbound URL (a private address needs SVC_OUTBOUND_ALLOW), the API
 * key is sealed at rest and never shown again, and a name already used (by the environment's
 * providers or the organization's) is 409: model keys `<provider>/<model_id>` must name one provider.
 */
export async function addProvider(
  db: Db,
  principal: Principal,
  input: z.output<typeof ProviderAddRequest>,
): Promise<z.input<typeof ProviderView>> {
  if (input.base_url) assertOutboundUrl(input.base_url, { field: "base_url" });
  if (environmentProviders().some((p) => p.name === input.name))
    throw Conflict(`The provider name ${input.name} is taken by SVC_MODEL_PROVIDERS.`);
  const existing = await db.reasoningProvider.findUnique({
    where: { orgDid_name: { orgDid: principal.orgDid, name: input.name } },
  });
  if (existing) throw Conflict(`Your organization already has a provider named ${input.name}.`);
  const id = newId("mpr");
  const row = await db.reasoningProvider.create({
    data: {
      id,
      orgDid: principal.orgDid,
      name: input.name,
      kind: input.kind,
      baseUrl: input.base_url ?? null,
      apiKeySealed: input.api_key ? await encryptSecret(input.api_key, apiKeyContext(id)) : null,
      models: input.models ?? undefined,
      createdBy: principal.actorDid,
    },
  });
  forgetDiscoveredModels();
  forgetRoutingCatalogue(principal.orgDid);
  return {
    id: row.id,
    name: row.name,
    kind: input.kind,
    base_url: row.baseUrl,
    has_api_key: row.apiKeySealed !== null,
    source: "console",
    models: input.models ?? null,
    created_at: row.createdAt.toISOString(),
  };
}
