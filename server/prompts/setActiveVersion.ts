import type { Db } from "../db/client";
import { Conflict, NotFound, ValidationFailed } from "../errors";
import { findProfile } from "./getPrompt";
import { recordPromptChange, type PromptChangeBy } from "./promptHistory";
import { isCanonicalSemver } from "./publishPromptVersion";
import { profileView } from "./views";

/**
 * Why `version` cannot be `key`'s active version, or null when it can: it must be an exact,
 * published, non-deprecated version. `field` names the field in the caller's terms (`version` for
 * the /v1 call, `/active_version` for a learning proposal's state).
 */
export async function activeVersionRefusal(db: Db, orgDid: string, key: string, version: unknown, field: string) {
  if (typeof version !== "string" || !isCanonicalSemver(version))
    return ValidationFailed([
      { field, code: "INVALID_FORMAT", message: "An exact published version (e.g. 1.2.0) is needed." },
    ]);
  const row = await db.promptVersion.findUnique({
    where: { orgDid_promptKey_version: { orgDid, promptKey: key, version } },
    select: { status: true },
  });
  if (!row) return NotFound("prompt version", `${key}@${version}`);
  if (row.status === "deprecated")
    return Conflict(`Version ${version} of ${key} is deprecated and cannot be the active version.`, {
      current_state: "deprecated",
      requested_state: "active",
    });
  return null;
}

/**
 * Moves `key`'s active version to `version`, recording the move (from, to, who, on whose request)
 * in the prompt's history, in the caller's transaction. The /v1 call, the console and a learning
 * proposal's apply and rollback all come here. Setting the version it already has changes nothing
 * and records nothing.
 */
export async function setActiveVersion(db: Db, orgDid: string, key: string, version: string, by: PromptChangeBy) {
  const profile = await findProfile(db, orgDid, key);
  const refusal = await activeVersionRefusal(db, orgDid, key, version, "version");
  if (refusal) throw refusal;
  if (profile.activeVersion === version) return profileView(profile);
  const updated = await db.promptProfile.update({ where: { id: profile.id }, data: { activeVersion: version } });
  await recordPromptChange(db, orgDid, key, "active_version", profile.activeVersion, version, by);
  return profileView(updated);
}
