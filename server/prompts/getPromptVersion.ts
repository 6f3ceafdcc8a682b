import semver from "semver";
import type { Db } from "../db/client";
import { NotFound, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { findProfile } from "./getPrompt";
import { isCanonicalSemver } from "./publishPromptVersion";
import { versionView } from "./views";

/**
 * The version of `key` that `wanted` names: an exact version (deprecated ones included: they stay
 * readable), or a semver range (`^1.2`, `~1.4.0`, `1.x`): the highest non-deprecated version it
 * matches, pre-releases only when the range names one (semver's rule). 404 when none matches.
 */
export async function resolvePromptVersion(db: Db, orgDid: string, key: string, wanted: string) {
  if (isCanonicalSemver(wanted)) {
    const row = await db.promptVersion.findUnique({
      where: { orgDid_promptKey_version: { orgDid, promptKey: key, version: wanted } },
    });
    if (!row) throw NotFound("prompt version", `${key}@${wanted}`);
    return row;
  }
  if (semver.validRange(wanted) === null)
    throw ValidationFailed([
      {
        field: "version",
        code: "INVALID_FORMAT",
        message: "Not a version or a semver range.",
        expected: "1.2.0, ^1.2, ~1.2.0, 1.x, >=1.0.0 <2.0.0",
        received: wanted,
      },
    ]);
  const candidates = await db.promptVersion.findMany({
    where: { orgDid, promptKey: key, status: "active" },
    select: { version: true },
  });
  const best = semver.maxSatisfying(
    candidates.map((c) => c.version),
    wanted,
  );
  if (!best) throw NotFound("prompt version matching", `${key}@${wanted}`);
  return (await db.promptVersion.findUnique({
    where: { orgDid_promptKey_version: { orgDid, promptKey: key, version: best } },
  }))!;
}

/** `GET /v1/prompts/{key}/versions/{version}`: an exact version, or the highest a range matches. */
export async function getPromptVersion(db: Db, principal: Principal, key: string, version: string) {
  const profile = await findProfile(db, principal.orgDid, key);
  return versionView(await resolvePromptVersion(db, principal.orgDid, key, version), profile.promptUri);
}
