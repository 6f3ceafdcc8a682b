import { readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { config } from "../config";
import {
  boundAjv,
  boundedAjvOptions,
  compileBounded,
  patternProblems,
  validationTooCostly,
  ValidationTooCostly,
} from "../jsonSchema/boundedAjv";
import { NotFound } from "../errors";
import { processWide } from "../processWide";
import { ConnectorDefinition, type ConnectorDefinition as Definition } from "./schemas";
import { logger } from "../telemetry/log";

/**
 * The connector catalogue is data: one JSON file per connector, the built-in ones in
 * `server/marketplace/connectors/` and more from `SVC_CONNECTORS_DIR`. Each file is checked
 * against `ConnectorDefinition` and its JSON Schemas are compiled once (ajv) when the catalogue
 * loads, so a broken schema is found at start, not at the first install. A file that does not
 * pass is left out and logged (naming the file and the field), never half-loaded; a connector id
 * that appears twice keeps the first (the built-in one).
 */
export interface ConnectorActionEntry {
  action: Definition["actions"][number];
  validateInput: ValidateFunction;
}

export interface CatalogueConnector {
  definition: Definition;
  /** icon_url made absolute (a `/connectors/…` path is served by svc itself). */
  iconUrl: string;
  validateConfig: ValidateFunction;
  actions: ReadonlyMap<string, ConnectorActionEntry>;
  /** The file's modification time stands for when the connector (this version) was published. */
  createdAt: Date;
  updatedAt: Date;
  /** The file it came from, for the log. */
  source: string;
  /** Lowercased name, provider, description and capabilities, for `?q=`. */
  searchText: string;
}

export interface Catalogue {
  /** Sorted by name, then id: the listing's order. */
  connectors: readonly CatalogueConnector[];
  byId: ReadonlyMap<string, CatalogueConnector>;
  /** Files left out, and why. */
  problems: readonly { file: string; problem: string }[];
}

/**
 * One ajv for the catalogue: every JSON Schema keyword and format, all errors, no coercion,
 * bounded as every schema svc checks callers' values against (server/jsonSchema/boundedAjv.ts):
 * the definitions are the operator's, the values checked against them are callers'.
 */
function newAjv(): Ajv {
  const ajv = new Ajv(boundedAjvOptions());
  (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
  return boundAjv(ajv);
}

const BUILT_IN_DIR = () => join(/* turbopackIgnore: true */ process.cwd(), "server", "marketplace", "connectors");

function connectorDirs(): string[] {
  const dirs = [BUILT_IN_DIR()];
  const extra = process.env.SVC_CONNECTORS_DIR;
  if (extra) dirs.push(isAbsolute(extra) ? extra : resolve(/* turbopackIgnore: true */ process.cwd(), extra));
  return dirs;
}

function absoluteIcon(icon: string): string {
  return icon.startsWith("/") ? `${config().publicUrl}${icon}` : icon;
}

/** Reads and checks one definition; throws a message naming what is wrong. */
export function compileConnector(
  raw: unknown,
  source: string,
  times: { createdAt: Date; updatedAt: Date },
  ajv = newAjv(),
): CatalogueConnector {
  const unreadable = (raw as { __unreadable?: string } | null)?.__unreadable;
  if (unreadable) throw new Error(`not valid JSON (${unreadable})`);
  const parsed = ConnectorDefinition.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw new Error(`${first.path.join(".") || "(root)"}: ${first.message}`);
  }
  const definition = parsed.data;
  // Checked against the meta-schema now (a broken schema is found at load); compiled on first
  // use, since compiling a thousand connectors' schemas up front costs seconds at start.
  // A value over the validation's bounds is a 400 naming `field`, the request's field checked.
  const compile = (schema: object, where: string, field: string): ValidateFunction => {
    if (!ajv.validateSchema(schema))
      throw new Error(`${where}: not a valid JSON Schema (${ajv.errorsText(ajv.errors)})`);
    const pattern = patternProblems(schema as Record<string, unknown>)[0];
    if (pattern) throw new Error(`${where}.${pattern.path}: ${pattern.message}`);
    let compiled: ValidateFunction | undefined;
    const validate = ((data: unknown) => {
      compiled ??= compileBounded(ajv, schema as Record<string, unknown>);
      try {
        const ok = compiled(data);
        validate.errors = compiled.errors;
        return ok;
      } catch (e) {
        if (e instanceof ValidationTooCostly) throw validationTooCostly(field, e);
        throw e;
      }
    }) as ValidateFunction;
    return validate;
  };
  const actions = new Map<string, ConnectorActionEntry>();
  for (const [i, action] of definition.actions.entries()) {
    if (actions.has(action.id)) throw new Error(`actions.${i}.id: ${action.id} appears twice`);
    actions.set(action.id, {
      action,
      validateInput: compile(action.input_schema, `actions.${i}.input_schema`, "input"),
    });
  }
  return {
    definition,
    iconUrl: absoluteIcon(definition.icon_url),
    validateConfig: compile(definition.configuration_schema, "configuration_schema", "config"),
    actions,
    createdAt: times.createdAt,
    updatedAt: times.updatedAt,
    source,
    searchText: [
      definition.name,
      definition.provider,
      definition.description,
      definition.connector_id,
      ...definition.capabilities,
    ]
      .join(" ")
      .toLowerCase(),
  };
}

/** Builds a catalogue from definitions already read (tests and benchmarks use it directly). */
export function buildCatalogue(
  entries: readonly { raw: unknown; source: string; createdAt: Date; updatedAt: Date }[],
): Catalogue {
  const ajv = newAjv();
  const byId = new Map<string, CatalogueConnector>();
  const problems: { file: string; problem: string }[] = [];
  for (const entry of entries) {
    try {
      const connector = compileConnector(entry.raw, entry.source, entry, ajv);
      if (byId.has(connector.definition.connector_id)) {
        problems.push({
          file: entry.source,
          problem: `connector_id ${connector.definition.connector_id} is already defined`,
        });
        continue;
      }
      byId.set(connector.definition.connector_id, connector);
    } catch (err) {
      problems.push({ file: entry.source, problem: err instanceof Error ? err.message : String(err) });
    }
  }
  const connectors = [...byId.values()].sort(
    (a, b) =>
      a.definition.name.localeCompare(b.definition.name, "en") ||
      a.definition.connector_id.localeCompare(b.definition.connector_id),
  );
  return { connectors, byId, problems };
}

function readDir(dir: string): { raw: unknown; source: string; createdAt: Date; updatedAt: Date }[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".json"))
      .sort();
  } catch (err) {
    logger().error(`the connector directory ${dir} cannot be read: ${(err as Error).message}`);
    return [];
  }
  return names.map((name) => {
    const source = join(dir, name);
    const stat = statSync(source);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(source, "utf8"));
    } catch (err) {
      raw = { __unreadable: (err as Error).message };
    }
    const created = stat.birthtimeMs > 0 && stat.birthtimeMs < stat.mtimeMs ? stat.birthtime : stat.mtime;
    return { raw, source, createdAt: created, updatedAt: stat.mtime };
  });
}

const held = processWide("marketplace.catalogue", () => ({ catalogue: undefined as Catalogue | undefined }));

/** The process's catalogue, read from disk on first use (and after `reloadCatalogue`). */
export function catalogue(): Catalogue {
  if (!held.catalogue) {
    const loaded = buildCatalogue(connectorDirs().flatMap(readDir));
    for (const p of loaded.problems) logger().error(`connector definition ${p.file} left out: ${p.problem}`);
    held.catalogue = loaded;
  }
  return held.catalogue;
}

/** Forgets the loaded catalogue: the next use reads the files again (SVC_CONNECTORS_DIR changed, tests). */
export function reloadCatalogue(): void {
  held.catalogue = undefined;
}

/** Replaces the process's catalogue (tests, the benchmark's 1,000 connectors). */
export function useCatalogue(replacement: Catalogue): void {
  held.catalogue = replacement;
}

/** A connector of the catalogue, or undefined. */
export function connectorById(id: string): CatalogueConnector | undefined {
  return catalogue().byId.get(id);
}

/** A connector of the catalogue, or 404. */
export function connectorOrThrow(id: string): CatalogueConnector {
  const connector = catalogue().byId.get(id);
  if (!connector) throw NotFound("connector", id);
  return connector;
}

/**
 * The OAuth client svc uses at a connector's provider when the organization set none in the
 * console: `SVC_CONNECTOR_<ID>_CLIENT_ID` / `_CLIENT_SECRET` (ID upper-cased, `-` as `_`), else
 * the definition's own `client_id` / `client_secret`.
 */
export function configuredClient(
  connector: CatalogueConnector,
): { clientId: string; clientSecret: string | undefined; source: "environment" | "definition" } | undefined {
  const envName = connector.definition.connector_id.toUpperCase().replace(/-/g, "_");
  const envId = process.env[`SVC_CONNECTOR_${envName}_CLIENT_ID`];
  if (envId)
    return {
      clientId: envId,
      clientSecret: process.env[`SVC_CONNECTOR_${envName}_CLIENT_SECRET`] || undefined,
      source: "environment",
    };
  const { client_id, client_secret } = connector.definition.oauth;
  if (client_id) return { clientId: client_id, clientSecret: client_secret, source: "definition" };
  return undefined;
}
