import type { z } from "zod";
import type { Db } from "../db/client";
import type { PromptProfile } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset } from "../http/cursor";
import type { PromptListQuery } from "./schemas";
import { profileView } from "./views";

/** `GET /v1/prompts`: the organization's prompts by key, filtered by namespace and scope. */
export async function listPrompts(
  db: Db,
  principal: Principal,
  query: z.output<typeof PromptListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<PromptProfile>(secret, "prompts", query, (last) => [last.promptKey]);
  const rows = await db.promptProfile.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.namespace ? { namespace: query.namespace } : {}),
      ...(query.scope ? { scope: query.scope } : {}),
      ...(after ? { promptKey: { gt: after[0] as string } } : {}),
    },
    orderBy: { promptKey: "asc" },
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(profileView), pagination };
}
