import type { Db } from "../db/client";
import { ValidationFailed, type FieldError } from "../errors";
import type { LearningApplier, LearningState } from "../learning/appliers";
import { catalogue } from "../reasoning/catalogue";
import { findProfile } from "./getPrompt";
import { activeVersionRefusal, setActiveVersion } from "./setActiveVersion";
import { setRecommendedModel } from "./setRecommendedModel";

/**
 * The learning proposals whose target is a prompt (the target is its key): moving its active
 * version (`{active_version}`) and setting its recommended model (`{recommended_model}`, null
 * clears it). `apply` goes through the same services as the /v1 calls, so the prompt's history
 * records the move, naming the proposal.
 */

function onlyKey(proposed: LearningState, key: string): FieldError[] {
  const errors: FieldError[] = Object.keys(proposed)
    .filter((k) => k !== key)
    .map((k) => ({ field: `/${k}`, code: "UNKNOWN_FIELD", message: `Unknown field ${JSON.stringify(k)}.` }));
  if (!(key in proposed))
    errors.push({ field: `/${key}`, code: "REQUIRED_FIELD_MISSING", message: `${key} is required.` });
  return errors;
}

const bySource = (by: Parameters<LearningApplier["apply"]>[4]) => ({
  actorDid: by.actorDid,
  source: by.action === "apply" ? ("learning_apply" as const) : ("learning_rollback" as const),
  proposalId: by.proposalId,
});

export const promptActiveVersionApplier: LearningApplier = {
  kind: "prompt_active_version",
  async validate(db: Db, orgDid: string, target: string, proposed: LearningState) {
    await findProfile(db, orgDid, target);
    const errors = onlyKey(proposed, "active_version");
    if (errors.length) throw ValidationFailed(errors);
    const refusal = await activeVersionRefusal(db, orgDid, target, proposed.active_version, "/active_version");
    // Whatever is wrong with the proposed version is a 400 about the proposal's state.
    if (refusal)
      throw refusal.status === 400
        ? refusal
        : ValidationFailed([
            {
              field: "/active_version",
              code: refusal.status === 404 ? "UNKNOWN_VERSION" : "VERSION_DEPRECATED",
              message: refusal.message,
            },
          ]);
  },
  async current(db: Db, orgDid: string, target: string) {
    return { active_version: (await findProfile(db, orgDid, target)).activeVersion };
  },
  async apply(db, orgDid, target, state, by) {
    const version = state.active_version;
    if (typeof version !== "string")
      throw ValidationFailed([
        { field: "/active_version", code: "INVALID_TYPE", message: "A version string is needed." },
      ]);
    await setActiveVersion(db, orgDid, target, version, bySource(by));
  },
};

export const promptRecommendedModelApplier: LearningApplier = {
  kind: "prompt_recommended_model",
  async validate(db: Db, orgDid: string, target: string, proposed: LearningState) {
    await findProfile(db, orgDid, target);
    const errors = onlyKey(proposed, "recommended_model");
    if (errors.length) throw ValidationFailed(errors);
    const model = proposed.recommended_model;
    if (model === null) return;
    if (typeof model !== "string" || model.length === 0 || model.length > 300)
      throw ValidationFailed([
        { field: "/recommended_model", code: "INVALID_TYPE", message: "A model_id of the catalogue, or null." },
      ]);
    const models = await catalogue(db, orgDid);
    if (!models.some((m) => m.modelId === model || m.key === model))
      throw ValidationFailed([
        {
          field: "/recommended_model",
          code: "UNKNOWN_MODEL",
          message: `${JSON.stringify(model)} is not a model of the organization's catalogue (GET /v1/reasoning/models).`,
        },
      ]);
  },
  async current(db: Db, orgDid: string, target: string) {
    return { recommended_model: (await findProfile(db, orgDid, target)).recommendedModel };
  },
  async apply(db, orgDid, target, state, by) {
    const model = state.recommended_model;
    if (model !== null && typeof model !== "string")
      throw ValidationFailed([{ field: "/recommended_model", code: "INVALID_TYPE", message: "A model_id or null." }]);
    await setRecommendedModel(db, orgDid, target, model, bySource(by));
  },
};

/** The prompts area's appliers (server/areas.ts registers them). */
export const promptLearningAppliers: readonly LearningApplier[] = [
  promptActiveVersionApplier,
  promptRecommendedModelApplier,
];
