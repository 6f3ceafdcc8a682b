import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019";
import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import Mustache from "mustache";
import { boundAjv, boundedAjvOptions, compileBounded } from "../jsonSchema/boundedAjv";
import { ValidationFailed } from "../errors";
import { processWide } from "../processWide";
import { MAX_RENDERED_TEXT, MAX_TEMPLATE_DEPTH } from "./schemas";

/**
 * Mustache, logic-less and kept that way: a template is parsed once per version (versions are
 * immutable, so the version id is the cache key), names resolve to the inputs' own JSON
 * properties only (never to a prototype's method, so `{{constructor}}` or `{{items.map}}` is
 * empty, not a call), nothing is HTML-escaped (a prompt is not HTML), and the only partial is
 * `{{> content}}`, where a child version's rendered text stands, inserted as text and never parsed
 * again (inputs cannot smuggle tags into a parent).
 */

type Tokens = string[][];

class DataContext extends Mustache.Context {
  override push(view: unknown): Mustache.Context {
    return new DataContext(view, this);
  }

  override lookup(name: string): unknown {
    if (name === ".") return this.view;
    const [head, ...rest] = name.split(".");
    for (let ctx: Mustache.Context | undefined = this; ctx; ctx = ctx.parent) {
      if (!isRecord(ctx.view) || !Object.hasOwn(ctx.view, head!)) continue;
      let value: unknown = ctx.view[head!];
      for (const segment of rest) {
        if (!isRecord(value) || !Object.hasOwn(value, segment)) return undefined;
        value = value[segment];
      }
      return value;
    }
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** How many section iterations one render may take (nested sections over long lists multiply). */
export const MAX_SECTION_ITERATIONS = 100_000;

/** Thrown when a render would take more than MAX_SECTION_ITERATIONS section iterations or produce more than MAX_RENDERED_TEXT characters. */
export class RenderTooLarge extends Error {}

class PromptWriter extends Mustache.Writer {
  /** Iterations left in the current render (renders are synchronous: one at a time). */
  budget = MAX_SECTION_ITERATIONS;
  /**
   * Characters produced so far by the current render: every piece of text, value and child is
   * counted as it is produced, so a section repeated 90,000 times is stopped at the bound, not
   * after its text is built (which ended in "Invalid string length").
   */
  produced = 0;

  private produce<T extends string | undefined>(text: T): T {
    this.produced += text?.length ?? 0;
    if (this.produced > MAX_RENDERED_TEXT) throw new RenderTooLarge();
    return text;
  }

  override rawValue(token: string[]): string {
    return this.produce(super.rawValue(token));
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.produce(super.unescapedValue(token, context));
  }

  override escapedValue(token: string[], context: Mustache.Context, config?: Mustache.RenderOptions): string {
    return this.produce(super.escapedValue(token, context, config));
  }

  constructor() {
    super();
    // Our own cache (below), bounded; mustache's would keep every template forever.
    (this as unknown as { templateCache: undefined }).templateCache = undefined;
  }

  override renderSection(
    token: string[],
    context: Mustache.Context,
    partials?: Mustache.PartialsOrLookupFn,
    originalTemplate?: string,
    config?: Mustache.RenderOptions,
  ): string {
    const value = context.lookup(token[1]!) as unknown;
    this.budget -= Array.isArray(value) ? value.length : 1;
    if (this.budget < 0) throw new RenderTooLarge();
    return super.renderSection(token, context, partials, originalTemplate, config);
  }

  /** The template being rendered (renders are synchronous: one at a time). */
  template = "";

  override renderPartial(token: string[], _context: Mustache.Context, partials: unknown): string {
    if (token[1] !== "content") return "";
    let child = (partials as { content?: string } | undefined)?.content ?? "";
    // A tag alone on its line takes the line (its newline included), as a partial does in
    // Mustache: the child keeps the line's indentation and ends the line.
    const standalone = !token[6];
    if (standalone) {
      const indentation = token[4] ?? "";
      if (indentation && Number(token[5]) === 0) child = this.indentPartial(child, indentation, false);
      const after = this.template.slice(Number(token[3]));
      if ((after.startsWith("\n") || after.startsWith("\r\n")) && !child.endsWith("\n")) child += "\n";
    }
    return this.produce(child);
  }
}

// not state: a parser whose parse cache is only a cache, and renders are synchronous (one at a time).
const writer = new PromptWriter();
const RENDER_OPTIONS: Mustache.RenderOptions = { escape: (value: unknown) => String(value) };

/** Parses a template; throws mustache's message (an unclosed section, a bad tag) when it is not one. */
export function parseTemplate(template: string): Tokens {
  return writer.parse(template) as Tokens;
}

/** How deep the template's sections nest (0 for none), counted without recursion. */
export function sectionDepth(tokens: Tokens): number {
  let deepest = 0;
  const stack: [Tokens, number][] = [[tokens, 0]];
  while (stack.length > 0) {
    const [list, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const t of list) if (Array.isArray(t[4])) stack.push([t[4] as unknown as Tokens, depth + 1]);
  }
  return deepest;
}

/** Why a parsed template cannot be published (sections nested too deep), or undefined. */
export function templateProblem(tokens: Tokens): string | undefined {
  const depth = sectionDepth(tokens);
  if (depth > MAX_TEMPLATE_DEPTH)
    return `The template nests sections ${depth} deep; at most ${MAX_TEMPLATE_DEPTH} levels are rendered.`;
  return undefined;
}

/** Whether the template places a child with `{{> content}}` (else a child is appended after a blank line). */
export function hasContentSlot(tokens: Tokens): boolean {
  return tokens.some(
    (t) => (t[0] === ">" && t[1] === "content") || (Array.isArray(t[4]) && hasContentSlot(t[4] as unknown as Tokens)),
  );
}

/** Renders parsed tokens with `inputs`, `child` standing at `{{> content}}`. */
export function renderTokens(
  tokens: Tokens,
  template: string,
  inputs: Record<string, unknown>,
  child?: string,
): string {
  writer.budget = MAX_SECTION_ITERATIONS;
  writer.produced = 0;
  writer.template = template;
  return writer.renderTokens(
    tokens,
    new DataContext(inputs),
    child === undefined ? {} : { content: child },
    template,
    RENDER_OPTIONS,
  );
}

/**
 * The ajv for input schemas of each JSON Schema dialect: draft-07 (the default), 2019-09 and
 * 2020-12, chosen by the schema's `$schema`. Every format, all errors, no coercion, no remote
 * references; bounded (server/jsonSchema/boundedAjv.ts: RE2 patterns, linear `uniqueItems`, a
 * work and time budget per validation).
 */
const inputSchemaAjvs = processWide("prompts.ajv", () => {
  const options = boundedAjvOptions();
  const withFormats = <A extends Ajv | Ajv2019 | Ajv2020>(ajv: A): A => {
    (addFormats as unknown as (a: A) => A)(ajv);
    return boundAjv(ajv);
  };
  return {
    draft07: withFormats(new Ajv(options)),
    draft201909: withFormats(new Ajv2019(options)),
    draft202012: withFormats(new Ajv2020(options)),
  };
});

/**
 * The ajv that reads `schema`'s dialect: draft-07 when it names none, else the one its `$schema`
 * names; undefined for a dialect svc does not read (publication refuses it, so a stored schema has one).
 */
export function inputSchemaAjv(schema: Record<string, unknown>): Ajv | Ajv2019 | Ajv2020 | undefined {
  const dialect = schema.$schema;
  if (dialect === undefined) return inputSchemaAjvs.draft07;
  if (typeof dialect !== "string") return undefined;
  if (/^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(dialect)) return inputSchemaAjvs.draft202012;
  if (/^https:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(dialect)) return inputSchemaAjvs.draft201909;
  if (/^http:\/\/json-schema\.org\/draft-07\/schema#?$/.test(dialect)) return inputSchemaAjvs.draft07;
  return undefined;
}

/** What a version needs to render, compiled once. */
export interface CompiledVersion {
  id: string;
  version: string;
  content: string;
  tokens: Tokens;
  slot: boolean;
  validate: ValidateFunction | null;
  /** The version it renders inside (immutable, like the rest). */
  extendsId: string | null;
}

/** The immutable part of a version row. */
export interface VersionSource {
  id: string;
  version: string;
  content: string;
  inputSchema: unknown;
  extendsId: string | null;
}

const MAX_CACHED = 2000;
const compiled = processWide("prompts.compiledVersions", () => new Map<string, CompiledVersion>());

/** A version compiled earlier, by id (most recently used last). */
export function cachedVersion(id: string): CompiledVersion | undefined {
  const hit = compiled.get(id);
  if (hit) {
    compiled.delete(id);
    compiled.set(id, hit);
  }
  return hit;
}

/** The compiled template and input validator of a version, from the cache or compiled now. */
export function compiledVersion(row: VersionSource): CompiledVersion {
  const { id, content } = row;
  const inputSchema = row.inputSchema as Record<string, unknown> | null;
  const hit = compiled.get(id);
  if (hit) {
    // Most recently used last: the oldest entry is the first the bound evicts.
    compiled.delete(id);
    compiled.set(id, hit);
    return hit;
  }
  const tokens = parseTemplate(content);
  // A version published before the depth bound: refused at render (400), never a stack overflow.
  const tooDeep = templateProblem(tokens);
  if (tooDeep)
    throw ValidationFailed([
      {
        field: "version",
        code: "INVALID_TEMPLATE",
        message: `Version ${row.version}: ${tooDeep} Publish a new version.`,
      },
    ]);
  const entry: CompiledVersion = {
    id,
    version: row.version,
    content,
    extendsId: row.extendsId,
    tokens,
    slot: hasContentSlot(tokens),
    validate: inputSchema ? compileStored(row.version, inputSchema) : null,
  };
  compiled.set(id, entry);
  if (compiled.size > MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  return entry;
}

/**
 * A stored version's validator. One published before svc ran patterns on RE2 may hold one RE2
 * cannot run: its renders are refused (400 naming the version), never answered 500.
 */
function compileStored(version: string, schema: Record<string, unknown>): ValidateFunction {
  try {
    return compileBounded(inputSchemaAjv(schema)!, withoutId(schema));
  } catch (e) {
    const message = `Version ${version}'s input_schema cannot be checked (${(e as Error).message}); publish a version whose schema svc accepts.`;
    return (() => {
      throw ValidationFailed([{ field: "version", code: "INVALID_SCHEMA", message }]);
    }) as unknown as ValidateFunction;
  }
}

/** ajv keeps schemas by `$id` and refuses a second with the same one: compile without it. */
export function withoutId(schema: Record<string, unknown>): Record<string, unknown> {
  if (!("$id" in schema)) return schema;
  const { $id: _id, ...rest } = schema;
  return rest;
}
