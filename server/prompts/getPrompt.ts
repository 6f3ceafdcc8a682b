import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { profileView } from "./views";

/** The organization's prompt `key`, or 404. */
export async function findProfile(db: Db, orgDid: string, key: string) {
  const profile = await db.promptProfile.findUnique({ where: { orgDid_promptKey: { orgDid, promptKey: key } } });
  if (!profile) throw NotFound("prompt", key);
  return profile;
}

/** `GET /v1/prompts/{key}`: the prompt's profile. */
export async function getPrompt(db: Db, principal: Principal, key: string) {
  return profileView(await findProfile(db, principal.orgDid, key));
}
