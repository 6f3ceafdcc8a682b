import semver from "semver";
import type { z } from "zod";
import type { Db } from "../db/client";
import { Conflict, ValidationFailed, type FieldError } from "../errors";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { compileBounded, patternProblems } from "../jsonSchema/boundedAjv";
import { jsonSchemaErrors } from "../marketplace/jsonSchemaErrors";
import { recordPromptChange } from "./promptHistory";
import { MAX_EXTENDS_DEPTH, MAX_INPUT_SCHEMA_BYTES, MAX_META_BYTES, type PromptPublishRequest } from "./schemas";
import { inputSchemaAjv, parseTemplate, templateProblem, withoutId } from "./templates";
import { promptUriOf, versionView } from "./views";

/** `<prompt_uri>@<version>`: the URI is everything before the last `@`. */
export function parseExtendsUri(uri: string): { promptUri: string; version: string } | null {
  const at = uri.lastIndexOf("@");
  if (at <= 0 || !uri.startsWith("prompt://")) return null;
  return { promptUri: uri.slice(0, at), version: uri.slice(at + 1) };
}

/** A version string svc accepts: valid semver, written canonically (`1.2.0`, not `v1.2.0` or `=1.2.0`). */
export const isCanonicalSemver = (version: string) => semver.valid(version) === version;

/**
 * Publishes a version of the caller's prompt `key`. The version must be valid semver and greater
 * than every version of the key published so far (pre-releases ordered as semver orders them:
 * `1.0.0-rc.1` < `1.0.0`), so publication order is version order and a published version never
 * changes. `input_schema` must itself be a JSON Schema ajv compiles in its `$schema`'s dialect
 * (draft-07 by default, 2019-09, 2020-12; no remote `$ref`);
 * the template must parse as Mustache; `extends_uri` must name a published version of the
 * organization, and its chain may neither come back to this version nor exceed MAX_EXTENDS_DEPTH.
 * The first version creates the prompt's profile and becomes its active version.
 */
export async function publishPromptVersion(
  tx: Db,
  principal: Principal,
  key: string,
  body: z.output<typeof PromptPublishRequest>,
  requestId: string,
) {
  const errors: FieldError[] = [];
  const { orgDid } = principal;
  if (!isCanonicalSemver(body.version))
    errors.push({
      field: "version",
      code: "INVALID_FORMAT",
      message: "version is not a semantic version (MAJOR.MINOR.PATCH, optional -pre-release and +build).",
      expected: "semver, e.g. 1.2.0",
      received: body.version,
    });
  if (body.meta.id !== key)
    errors.push({
      field: "meta.id",
      code: "INVALID_VALUE",
      message: `meta.id must be the prompt's key ${JSON.stringify(key)}.`,
      received: body.meta.id,
    });
  if (JSON.stringify(body.meta).length > MAX_META_BYTES)
    errors.push({
      field: "meta",
      code: "OUT_OF_RANGE",
      message: `meta is larger than ${MAX_META_BYTES} bytes as JSON.`,
    });
  try {
    const problem = templateProblem(parseTemplate(body.content));
    if (problem) errors.push({ field: "content", code: "OUT_OF_RANGE", message: problem });
  } catch (e) {
    errors.push({
      field: "content",
      code: "INVALID_TEMPLATE",
      message: `Not a Mustache template: ${(e as Error).message}`,
    });
  }
  if (body.input_schema !== undefined) errors.push(...inputSchemaErrors(body.input_schema));
  if (errors.length) throw ValidationFailed(errors);

  // Take the profile's row first: concurrent publications of one key queue here (PostgreSQL's
  // row lock; SQLite's writer is already one at a time), so "greater than every version" holds.
  await tx.promptProfile.updateMany({ where: { orgDid, promptKey: key }, data: { updatedAt: new Date() } });
  const profile = await tx.promptProfile.findUnique({ where: { orgDid_promptKey: { orgDid, promptKey: key } } });
  const promptUri = profile?.promptUri ?? promptUriOf(body.meta.namespace, key);
  if (profile && profile.namespace !== body.meta.namespace)
    throw ValidationFailed([
      { field: "meta.namespace", code: "INVALID_VALUE", message: `The prompt's namespace is ${profile.namespace}.` },
    ]);
  if (profile && profile.scope !== body.meta.scope)
    throw ValidationFailed([
      { field: "meta.scope", code: "INVALID_VALUE", message: `The prompt's scope is ${profile.scope}.` },
    ]);
  if (!profile && (await tx.promptProfile.findFirst({ where: { orgDid, promptUri }, select: { id: true } })))
    throw Conflict(`Another prompt already has the URI ${promptUri}.`);

  const published = await tx.promptVersion.findMany({ where: { orgDid, promptKey: key }, select: { version: true } });
  const highest = published.map((v) => v.version).sort(semver.rcompare)[0];
  if (highest !== undefined && !semver.gt(body.version, highest))
    throw Conflict(
      published.some((v) => v.version === body.version)
        ? `Version ${body.version} of ${key} is already published; published versions are immutable.`
        : `Version ${body.version} is not greater than ${highest}, the highest published version of ${key}.`,
      { highest_version: highest },
    );

  const extendsId = body.extends_uri
    ? await resolveExtends(tx, orgDid, body.extends_uri, { promptUri, version: body.version })
    : null;

  const row = await tx.promptVersion.create({
    data: {
      id: newId("pmv"),
      orgDid,
      promptKey: key,
      version: body.version,
      content: body.content,
      extendsUri: body.extends_uri ?? null,
      extendsId,
      meta: body.meta as object,
      inputSchema: body.input_schema === undefined ? undefined : (body.input_schema as object),
      publishedBy: principal.actorDid,
      status: "active",
    },
  });
  if (!profile) {
    await tx.promptProfile.create({
      data: {
        id: newId("pmp"),
        orgDid,
        promptKey: key,
        promptUri,
        scope: body.meta.scope,
        namespace: body.meta.namespace,
        activeVersion: body.version,
      },
    });
    await recordPromptChange(tx, orgDid, key, "active_version", null, body.version, {
      actorDid: principal.actorDid,
      source: "publish",
      requestId,
    });
  }
  return versionView(row, promptUri);
}

function inputSchemaErrors(schema: Record<string, unknown>): FieldError[] {
  if (JSON.stringify(schema).length > MAX_INPUT_SCHEMA_BYTES)
    return [
      {
        field: "input_schema",
        code: "OUT_OF_RANGE",
        message: `input_schema is larger than ${MAX_INPUT_SCHEMA_BYTES} bytes as JSON.`,
      },
    ];
  const ajv = inputSchemaAjv(schema);
  if (!ajv)
    return [
      {
        field: "input_schema.$schema",
        code: "INVALID_SCHEMA",
        message: `input_schema.$schema names a dialect svc does not read (${String(schema.$schema).slice(0, 200)}): use draft-07, 2019-09 or 2020-12, or leave it out for draft-07.`,
      },
    ];
  if (!ajv.validateSchema(withoutId(schema)))
    return jsonSchemaErrors(ajv.errors, "input_schema").map((e) => ({ ...e, code: "INVALID_SCHEMA" }));
  const patterns = patternProblems(schema);
  if (patterns.length)
    return patterns.map((p) => ({ field: `input_schema.${p.path}`, code: "INVALID_SCHEMA", message: p.message }));
  try {
    compileBounded(ajv, withoutId(schema));
    return [];
  } catch (e) {
    return [{ field: "input_schema", code: "INVALID_SCHEMA", message: (e as Error).message }];
  }
}

/**
 * The id of the version `uri` names, after checking its chain: it must exist in the organization,
 * and following `extends` upwards from it must neither reach the version being published (a
 * cycle) nor go deeper than MAX_EXTENDS_DEPTH.
 */
async function resolveExtends(
  tx: Db,
  orgDid: string,
  uri: string,
  self: { promptUri: string; version: string },
): Promise<string> {
  const refuse = (code: string, message: string) =>
    ValidationFailed([{ field: "extends_uri", code, message, received: uri }]);
  const parsed = parseExtendsUri(uri);
  if (!parsed || !isCanonicalSemver(parsed.version))
    throw refuse("INVALID_FORMAT", "extends_uri must be `<prompt_uri>@<version>` with an exact version.");
  if (parsed.promptUri === self.promptUri && parsed.version === self.version)
    throw refuse("EXTENDS_CYCLE", "A version cannot extend itself.");
  const parentProfile = await tx.promptProfile.findFirst({ where: { orgDid, promptUri: parsed.promptUri } });
  const parent = parentProfile
    ? await tx.promptVersion.findFirst({
        where: { orgDid, promptKey: parentProfile.promptKey, version: parsed.version },
        select: { id: true },
      })
    : null;
  if (!parent) throw refuse("EXTENDS_UNRESOLVED", `No published prompt version ${uri}.`);
  // Walk up: a chain is at most MAX_EXTENDS_DEPTH versions above the new one, and never meets it.
  let depth = 1;
  const seen = new Set<string>([parent.id]);
  let cursor = await tx.promptVersion.findUnique({
    where: { id: parent.id },
    select: { extendsId: true, promptKey: true, version: true },
  });
  while (cursor?.extendsId) {
    depth += 1;
    if (depth > MAX_EXTENDS_DEPTH)
      throw refuse("EXTENDS_TOO_DEEP", `The extends chain would be more than ${MAX_EXTENDS_DEPTH} versions deep.`);
    if (seen.has(cursor.extendsId)) throw refuse("EXTENDS_CYCLE", "The extends chain comes back to itself.");
    seen.add(cursor.extendsId);
    cursor = await tx.promptVersion.findUnique({
      where: { id: cursor.extendsId },
      select: { extendsId: true, promptKey: true, version: true },
    });
    if (cursor && promptUriMatches(cursor, self))
      throw refuse("EXTENDS_CYCLE", "The extends chain comes back to this version.");
  }
  return parent.id;
}

function promptUriMatches(v: { promptKey: string; version: string }, self: { promptUri: string; version: string }) {
  return self.promptUri.endsWith(`/${v.promptKey}`) && v.version === self.version;
}
