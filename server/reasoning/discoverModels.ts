import { z } from "zod";
import { createGuardedFetch } from "../outbound/guardedFetch";
import { processWide } from "../processWide";
import type { Provider } from "./providers";
import { reasoningSettings } from "./settings";

/**
 * A provider configured without `models` offers what its own list says: OpenAI-compatible
 * servers answer `GET {base_url}/models` (`{data: [{id}]}`: OpenAI, Ollama, vLLM, LM Studio,
 * OpenRouter), Anthropic `GET /v1/models`. Neither SDK lists models, so this is the one request
 * svc makes itself, through the same SSRF guard.
 *
 * Lists are kept SVC_REASONING_DISCOVERY_TTL_SECONDS; a stale list is served while a fresh one is
 * read in the background, so only the very first call after start waits for it (the routed call
 * admits inside its transaction and should not wait on the network there).
 */
const DISCOVERY_TIMEOUT_MS = 5_000;
const FAILURE_TTL_MS = 30_000;
const ANTHROPIC_BASE = "https://api.anthropic.com/v1";

interface Listing {
  at: number;
  models: string[];
  error: string | null;
  refreshing?: Promise<Listing>;
}

const cache = processWide("reasoning.discoveredModels", () => new Map<string, Listing>());
const ModelList = z.object({ data: z.array(z.object({ id: z.string().min(1).max(300) })).max(5000) });

const keyOf = (p: Provider) => `${p.source}:${p.id ?? p.name}:${p.baseUrl ?? ""}`;

async function fetchList(p: Provider): Promise<Listing> {
  const fetch = createGuardedFetch({ timeoutMs: DISCOVERY_TIMEOUT_MS, maxBytes: 4 * 1024 * 1024 });
  const key = await p.apiKey();
  const base = (p.baseUrl ?? (p.kind === "anthropic" ? ANTHROPIC_BASE : "")).replace(/\/$/, "");
  const headers: Record<string, string> =
    p.kind === "anthropic"
      ? { "anthropic-version": "2023-06-01", ...(key ? { "x-api-key": key } : {}) }
      : key
        ? { authorization: `Bearer ${key}` }
        : {};
  try {
    const answer = await fetch(`${base}/models${p.kind === "anthropic" ? "?limit=1000" : ""}`, { headers });
    if (!answer.ok) return { at: Date.now(), models: [], error: `GET /models answered ${answer.status}` };
    const parsed = ModelList.safeParse(await answer.json());
    if (!parsed.success) return { at: Date.now(), models: [], error: "GET /models answered an unexpected shape" };
    return { at: Date.now(), models: parsed.data.data.map((m) => m.id), error: null };
  } catch (e) {
    return { at: Date.now(), models: [], error: e instanceof Error ? e.message : String(e) };
  }
}

function refresh(p: Provider, previous: Listing | undefined): Promise<Listing> {
  if (previous?.refreshing) return previous.refreshing;
  const k = keyOf(p);
  const pending = fetchList(p).then((fresh) => {
    // A failed refresh keeps the last good list: a provider's hiccup should not empty the catalogue.
    const kept = fresh.error && previous && previous.models.length > 0 ? { ...previous, at: fresh.at } : fresh;
    cache.set(k, kept);
    return kept;
  });
  if (previous) previous.refreshing = pending;
  else cache.set(k, { at: 0, models: [], error: null, refreshing: pending });
  return pending;
}

/** The provider's models: its configuration's, else its own list (see above). */
export async function modelsOf(p: Provider): Promise<{ models: string[]; error: string | null }> {
  if (p.models) return { models: p.models.map((m) => m.model_id), error: null };
  const listing = cache.get(keyOf(p));
  const ttl = listing?.error ? FAILURE_TTL_MS : reasoningSettings().discoveryTtlSeconds * 1000;
  if (listing && listing.at > 0) {
    if (Date.now() - listing.at > ttl) void refresh(p, listing);
    return listing;
  }
  return refresh(p, listing);
}

/** Forget every listing (tests; a console provider removed). */
export function forgetDiscoveredModels(): void {
  cache.clear();
}
