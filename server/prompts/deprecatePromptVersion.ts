import type { Db } from "../db/client";
import { Conflict, IllegalTransition, NotFound, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { findProfile } from "./getPrompt";
import { recordPromptChange } from "./promptHistory";
import { isCanonicalSemver } from "./publishPromptVersion";
import { versionView } from "./views";

/**
 * Deprecates an exact version (active → deprecated, the only move a version's status makes). A
 * deprecated version stays readable and renderable by its exact version, but no range picks it
 * and it cannot become the active version. The active version itself cannot be deprecated: move
 * the active version first (409).
 */
export async function deprecatePromptVersion(
  db: Db,
  principal: Principal,
  key: string,
  version: string,
  requestId: string,
) {
  const profile = await findProfile(db, principal.orgDid, key);
  if (!isCanonicalSemver(version))
    throw ValidationFailed([{ field: "version", code: "INVALID_FORMAT", message: "An exact version is needed." }]);
  const row = await db.promptVersion.findUnique({
    where: { orgDid_promptKey_version: { orgDid: principal.orgDid, promptKey: key, version } },
  });
  if (!row) throw NotFound("prompt version", `${key}@${version}`);
  if (row.status !== "active") throw IllegalTransition("prompt version", row.status, "deprecated");
  if (profile.activeVersion === version)
    throw Conflict(`Version ${version} is the active version of ${key}: move the active version first.`, {
      current_state: "active",
      requested_state: "deprecated",
    });
  // Conditional on the status read above, so a concurrent deprecation cannot record twice.
  const moved = await db.promptVersion.updateMany({
    where: { id: row.id, status: "active" },
    data: { status: "deprecated", deprecatedAt: new Date() },
  });
  if (moved.count === 0) throw IllegalTransition("prompt version", "deprecated", "deprecated");
  await recordPromptChange(db, principal.orgDid, key, "deprecation", null, version, {
    actorDid: principal.actorDid,
    source: "call",
    requestId,
  });
  return versionView({ ...row, status: "deprecated", deprecatedAt: new Date() }, profile.promptUri);
}
