import { afterCommit, type Db } from "../db/client";
import { NotFound, ValidationFailed, type FieldError } from "../errors";
import { validationTooCostly, ValidationTooCostly } from "../jsonSchema/boundedAjv";
import { jsonSchemaErrors } from "../marketplace/jsonSchemaErrors";
import { processWide } from "../processWide";
import { resolvePromptVersion } from "./getPromptVersion";
import { isCanonicalSemver } from "./publishPromptVersion";
import { MAX_RENDERED_TEXT } from "./schemas";
import { cachedVersion, compiledVersion, RenderTooLarge, renderTokens, type CompiledVersion } from "./templates";

/** What a render answers (`POST /v1/prompts/{key}/render`) and what a reasoning call uses as its prompt. */
export interface RenderedPrompt {
  prompt_key: string;
  version: string;
  text: string;
}

/** A render as a reasoning call uses it: also the model the prompt's profile recommends (null when none). */
export interface RenderedPromptForCall extends RenderedPrompt {
  recommendedModel: string | null;
}

/**
 * Renders `key` (its active version, or the version or range given) with `inputs`. The inputs
 * are checked against the input schema of every version of the chain (the version and the ones
 * it extends: a parent renders with the same inputs); errors name JSON Pointers (`/inputs/name`).
 * Then the version renders, and each parent in turn renders with the child's text at its
 * `{{> content}}`, or followed by a blank line and the child's text when it has no such tag.
 * Templates and validators are compiled once per version, and each version's chain is kept per
 * process (published versions are immutable): a render reads the profile's active version only,
 * so a move of the active version or a new publish is seen at once; a range still reads the
 * versions it may match.
 */
export async function renderPrompt(
  db: Db,
  orgDid: string,
  key: string,
  request: { version?: string; inputs: Record<string, unknown> },
  /** Where the inputs are in the caller's request, as a JSON Pointer (a think call's `/prompt/inputs`). */
  at = "/inputs",
): Promise<RenderedPromptForCall> {
  // The one read a render needs: the profile's active version is all that can change. The
  // version and its chain, once published, cannot; they come from this process's cache.
  const profile = await db.promptProfile.findUnique({
    where: { orgDid_promptKey: { orgDid, promptKey: key } },
    select: { id: true, activeVersion: true, recommendedModel: true },
  });
  if (!profile) throw NotFound("prompt", key);
  const wanted = request.version ?? profile.activeVersion;
  let chain = isCanonicalSemver(wanted) ? cachedChain(`${profile.id}@${wanted}`) : undefined;
  if (!chain) {
    const row = await resolvePromptVersion(db, orgDid, key, wanted);
    const resolved = await chainOf(db, compiledVersion(row));
    // Only what committed: a version published in a transaction that rolls back never existed.
    afterCommit(db, () => rememberChain(`${profile.id}@${row.version}`, resolved));
    chain = resolved;
  }

  const errors: FieldError[] = [];
  const valid = (link: CompiledVersion) => {
    try {
      return link.validate!(request.inputs);
    } catch (e) {
      if (e instanceof ValidationTooCostly) throw validationTooCostly(at, e);
      throw e;
    }
  };
  for (const link of chain)
    if (link.validate && !valid(link))
      for (const e of jsonSchemaErrors(link.validate.errors, "inputs", "pointer").map((e) => ({
        ...e,
        field: at + e.field.slice("/inputs".length),
      })))
        if (!errors.some((o) => o.field === e.field && o.code === e.code)) errors.push(e);
  if (errors.length) throw ValidationFailed(errors, "The inputs do not match the prompt's input schema.");

  let text: string | undefined;
  try {
    for (const link of chain) {
      if (text === undefined) text = renderTokens(link.tokens, link.content, request.inputs);
      else if (link.slot) text = renderTokens(link.tokens, link.content, request.inputs, text);
      else text = `${renderTokens(link.tokens, link.content, request.inputs)}\n\n${text}`;
      if (text.length > MAX_RENDERED_TEXT) throw new RenderTooLarge();
    }
  } catch (e) {
    if (!(e instanceof RenderTooLarge)) throw e;
    throw ValidationFailed(
      [
        {
          field: "/inputs",
          code: "OUT_OF_RANGE",
          message: `The rendered text would exceed ${MAX_RENDERED_TEXT} characters.`,
        },
      ],
      "The rendered prompt is too large.",
    );
  }
  return { prompt_key: key, version: chain[0]!.version, text: text ?? "", recommendedModel: profile.recommendedModel };
}

/** The version and the ones it extends, child first: from the cache, reading only what it lacks. */
async function chainOf(db: Db, leaf: CompiledVersion): Promise<CompiledVersion[]> {
  const chain = [leaf];
  for (let parentId = leaf.extendsId; parentId;) {
    let parent = cachedVersion(parentId);
    if (!parent) {
      const row = await db.promptVersion.findUnique({ where: { id: parentId } });
      // Versions are never deleted; a missing parent is a broken database, not a caller's mistake.
      if (!row) throw NotFound("prompt version", parentId);
      parent = compiledVersion(row);
    }
    chain.push(parent);
    parentId = parent.extendsId;
  }
  return chain;
}

const MAX_CHAINS = 2000;
/** Compiled chains by `<profile id>@<exact version>` (a profile's id is never reused), most recently used last. */
const chains = processWide("prompts.renderChains", () => new Map<string, CompiledVersion[]>());

function cachedChain(id: string): CompiledVersion[] | undefined {
  const hit = chains.get(id);
  if (hit) {
    chains.delete(id);
    chains.set(id, hit);
  }
  return hit;
}

function rememberChain(id: string, chain: CompiledVersion[]): void {
  chains.delete(id);
  chains.set(id, chain);
  if (chains.size > MAX_CHAINS) chains.delete(chains.keys().next().value!);
}
