import type { z } from "zod";
import type { PromptHistory, PromptProfile, PromptVersion } from "../db/generated/sqlite/client";
import type * as s from "./schemas";

/** A prompt's `prompt_uri`: what an `extends_uri` names, with `@<version>`. */
export const promptUriOf = (namespace: string, key: string) => `prompt://${namespace}/${key}`;

export function profileView(p: PromptProfile): z.input<typeof s.PromptProfile> {
  return {
    prompt_uri: p.promptUri,
    prompt_key: p.promptKey,
    org_id: p.orgDid,
    scope: p.scope,
    namespace: p.namespace,
    active_version: p.activeVersion,
    recommended_model: p.recommendedModel,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function versionView(v: PromptVersion, promptUri: string): z.input<typeof s.PromptVersion> {
  return {
    prompt_uri: promptUri,
    prompt_key: v.promptKey,
    org_id: v.orgDid,
    version: v.version,
    content: v.content,
    extends_uri: v.extendsUri,
    published_by: v.publishedBy,
    meta: v.meta as Record<string, unknown>,
    input_schema: (v.inputSchema as Record<string, unknown> | null) ?? null,
    published_at: v.publishedAt.toISOString(),
    status: v.status as "active" | "deprecated",
  };
}

export function historyView(h: PromptHistory): z.input<typeof s.PromptHistoryEntry> {
  return {
    id: h.id,
    prompt_key: h.promptKey,
    change: h.change as z.input<typeof s.PromptHistoryEntry>["change"],
    from: h.fromValue,
    to: h.toValue,
    actor: h.actorDid,
    source: h.source as z.input<typeof s.PromptHistoryEntry>["source"],
    request_id: h.requestId,
    proposal_id: h.proposalId,
    at: h.at.toISOString(),
  };
}
