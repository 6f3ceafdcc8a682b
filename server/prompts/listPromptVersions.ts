import type { z } from "zod";
import type { Db } from "../db/client";
import type { PromptVersion } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { ListQuery } from "../http/listSchemas";
import { findProfile } from "./getPrompt";
import { versionView } from "./views";

/**
 * `GET /v1/prompts/{key}/versions`: newest first. Versions are published in increasing semver
 * order, so publication order is version order, and the cursor is (published_at, id).
 */
export async function listPromptVersions(
  db: Db,
  principal: Principal,
  key: string,
  query: z.output<typeof ListQuery>,
  secret: Buffer,
) {
  const profile = await findProfile(db, principal.orgDid, key);
  const { after, take, page } = keyset<PromptVersion>(secret, `prompt-versions:${key}`, query, (last) => [
    last.publishedAt.toISOString(),
    last.id,
  ]);
  const rows = await db.promptVersion.findMany({
    where: {
      orgDid: principal.orgDid,
      promptKey: key,
      ...olderThan(after, "publishedAt", "id"),
    },
    orderBy: [{ publishedAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map((v) => versionView(v, profile.promptUri)), pagination };
}
