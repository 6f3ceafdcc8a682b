import type { Db } from "../db/client";
import { findProfile } from "./getPrompt";
import { recordPromptChange, type PromptChangeBy } from "./promptHistory";
import { profileView } from "./views";

/**
 * Sets (or, with null, clears) the model recommended for `key`, recording the change in the
 * prompt's history, in the caller's transaction. A learning proposal's apply and rollback come
 * here; the proposal checked the model against the catalogue when it was made (a rollback restores
 * the earlier value even if the catalogue has since dropped it).
 */
export async function setRecommendedModel(
  db: Db,
  orgDid: string,
  key: string,
  model: string | null,
  by: PromptChangeBy,
) {
  const profile = await findProfile(db, orgDid, key);
  if (profile.recommendedModel === model) return profileView(profile);
  const updated = await db.promptProfile.update({ where: { id: profile.id }, data: { recommendedModel: model } });
  await recordPromptChange(db, orgDid, key, "recommended_model", profile.recommendedModel, model, by);
  return profileView(updated);
}
