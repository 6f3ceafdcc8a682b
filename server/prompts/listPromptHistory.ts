import type { z } from "zod";
import type { Db } from "../db/client";
import type { PromptHistory } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { ListQuery } from "../http/listSchemas";
import { findProfile } from "./getPrompt";
import { historyView } from "./views";

/** `GET /v1/prompts/{key}/history`: the moves of the active version and recommended model, and deprecations, newest first. */
export async function listPromptHistory(
  db: Db,
  principal: Principal,
  key: string,
  query: z.output<typeof ListQuery>,
  secret: Buffer,
) {
  await findProfile(db, principal.orgDid, key);
  const { after, take, page } = keyset<PromptHistory>(secret, `prompt-history:${key}`, query, (last) => [
    last.at.toISOString(),
    last.id,
  ]);
  const rows = await db.promptHistory.findMany({
    where: {
      orgDid: principal.orgDid,
      promptKey: key,
      ...olderThan(after, "at", "id"),
    },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(historyView), pagination };
}
