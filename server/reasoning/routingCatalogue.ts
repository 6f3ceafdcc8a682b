import type { Db } from "../db/client";
import { processWide } from "../processWide";
import { catalogue, type CatalogueModel } from "./catalogue";
import { measuredPerformance, type Measured } from "./measuredPerformance";
import { loadRules, type Rule } from "./routingRules";

/**
 * The catalogue and measured performance the router reads, kept a few seconds per organization:
 * the router runs inside the call's write transaction and should add well under a millisecond,
 * while performance moves slowly. `GET /v1/reasoning/models` always reads fresh; adding or
 * removing a provider, or setting a routing rule, forgets the organization's copy (in this process;
 * others see it within TTL_MS).
 */
const TTL_MS = 5_000;
const MAX_ORGS = 1_000;

interface Held {
  at: number;
  models: CatalogueModel[];
  measured: Map<string, Measured>;
  rules: Rule[];
}
const cache = processWide("reasoning.routingCatalogue", () => new Map<string, Held>());

export async function routingCatalogue(db: Db, orgDid: string): Promise<Held> {
  const held = cache.get(orgDid);
  if (held && Date.now() - held.at < TTL_MS) return held;
  const [models, measured, rules] = await Promise.all([
    catalogue(db, orgDid),
    measuredPerformance(db, orgDid),
    loadRules(db, orgDid),
  ]);
  const fresh = { at: Date.now(), models, measured, rules };
  if (cache.size >= MAX_ORGS) cache.clear();
  cache.set(orgDid, fresh);
  return fresh;
}

/** Forget one organization's copy (a provider added or removed), or every copy. */
export function forgetRoutingCatalogue(orgDid?: string): void {
  if (orgDid) cache.delete(orgDid);
  else cache.clear();
}
