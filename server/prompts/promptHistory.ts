import type { Db } from "../db/client";
import { newId } from "../ids";
import type { PROMPT_HISTORY_CHANGES, PROMPT_HISTORY_SOURCES } from "./schemas";

/** Who moved a prompt's state, and on whose request: a /v1 or console call, or a learning proposal. */
export interface PromptChangeBy {
  actorDid: string;
  source: (typeof PROMPT_HISTORY_SOURCES)[number];
  requestId?: string | null;
  proposalId?: string | null;
}

/** Appends one entry to a prompt's history, in the caller's transaction (the change's own). */
export async function recordPromptChange(
  db: Db,
  orgDid: string,
  promptKey: string,
  change: (typeof PROMPT_HISTORY_CHANGES)[number],
  from: string | null,
  to: string | null,
  by: PromptChangeBy,
): Promise<void> {
  await db.promptHistory.create({
    data: {
      id: newId("phs"),
      orgDid,
      promptKey,
      change,
      fromValue: from,
      toValue: to,
      actorDid: by.actorDid,
      source: by.source,
      requestId: by.requestId ?? null,
      proposalId: by.proposalId ?? null,
    },
  });
}
