import type { z } from "zod";
import type { Database, Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { affinityOrder, computePromptAffinity } from "./computePromptAffinity";
import type { PromptAffinityQuery } from "./schemas";

/**
 * `GET /v1/prompts/affinity`: the affinity report (computePromptAffinity), a page at a time. The
 * database reads the prompts from the cursor's on (a prompt's scores depend on its own pairs
 * only); the rows before the cursor's position in the report's order are then cut.
 */
export async function listPromptAffinity(
  db: Db,
  engine: Database["engine"],
  principal: Principal,
  query: z.output<typeof PromptAffinityQuery>,
  secret: Buffer,
) {
  const after = query.cursor ? afterCursor(decodeCursor(secret, "prompt-affinity", query.cursor)) : undefined;
  const report = await computePromptAffinity(db, principal.orgDid, {
    engine,
    windowDays: query.window_days,
    promptKey: query.prompt_key,
    fromPromptKey: after?.prompt_key,
    minSample: query.min_sample,
  });
  const rest = after ? report.filter((r) => affinityOrder(r, after) > 0) : report;
  const items = rest.slice(0, query.limit);
  const has_more = rest.length > query.limit;
  const last = items[items.length - 1];
  return {
    data: items.map(({ signals: _signals, ...r }) => r),
    pagination: {
      has_more,
      next_cursor:
        has_more && last
          ? encodeCursor(secret, "prompt-affinity", [
              last.prompt_key,
              last.affinity_score,
              last.model_id,
              last.provider,
            ])
          : null,
    },
  };
}

function afterCursor([prompt_key, affinity_score, model_id, provider]: unknown[]) {
  return {
    prompt_key: String(prompt_key),
    affinity_score: Number(affinity_score),
    model_id: String(model_id),
    provider: String(provider),
  };
}
