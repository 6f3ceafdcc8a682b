"use client";

import { Fragment, useEffect, useState, type ReactNode } from "react";

/**
 * The API reference, rendered from the live OpenAPI document (no hand-written docs to drift) with
 * the console's own components, so it is accessible (WCAG 2 A/AA, light and dark) like every
 * other page: Scalar's reference failed axe on contrast, button names and ARIA attributes.
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
  additionalProperties?: boolean | Schema;
};
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: Schema };
type Operation = {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
};
type Document = {
  info: { title: string; version: string; description?: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const METHOD_TONE: Record<string, string> = {
  get: "bg-success/15 text-success",
  post: "bg-primary/15 text-primary",
  put: "bg-warning/15 text-warning",
  patch: "bg-warning/15 text-warning",
  delete: "bg-destructive/15 text-destructive",
};
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-");

/** `code` spans of the document's Markdown, as code; the rest as text. */
function Text({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <>
      {text.split(/(`[^`]+`)/).map((part, i) =>
        part.startsWith("`") && part.endsWith("`") ? (
          <code key={i} className="rounded bg-muted px-1 font-mono text-[0.85em]">
            {part.slice(1, -1)}
          </code>
        ) : (
          <Fragment key={i}>{part}</Fragment>
        ),
      )}
    </>
  );
}

function Paragraphs({ text, className }: { text?: string; className?: string }) {
  if (!text) return null;
  return (
    <div className={className}>
      {text.split(/\n{2,}/).map((p, i) => (
        <p key={i} className="mt-2 text-sm leading-6">
          <Text text={p} />
        </p>
      ))}
    </div>
  );
}

export function ApiReference() {
  const [doc, setDoc] = useState<Document | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    fetch("/v1/openapi.json")
      .then((r) =>
        r.ok ? (r.json() as Promise<Document>) : Promise.reject(new Error(`the document answered ${r.status}`)),
      )
      .then(setDoc, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, []);
  if (error)
    return (
      <p role="alert" className="text-sm text-destructive">
        The API reference could not be loaded: {error}
      </p>
    );
  if (!doc) return <p className="text-sm text-muted-foreground">Loading the API reference…</p>;
  const schemas = doc.components?.schemas ?? {};
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m]! })),
  );
  const tags = (doc.tags ?? []).filter((t) => operations.some((o) => o.op.tags?.includes(t.name)));
  return (
    <div className="max-w-5xl">
      <h1 className="text-2xl font-semibold tracking-tight">{doc.info.title}</h1>
      <p className="mt-1 text-sm text-muted-foreground">
        Version {doc.info.version} ·{" "}
        <a href="/v1/openapi.json" className="text-primary underline underline-offset-2">
          the OpenAPI document
        </a>{" "}
        (generate a client from it) ·{" "}
        <a href="/docs/errors" className="text-primary underline underline-offset-2">
          error types
        </a>
      </p>
      <Paragraphs text={doc.info.description} className="mt-2" />
      <nav aria-label="API sections" className="mt-5 rounded-lg border border-border bg-card p-4">
        <h2 className="text-sm font-semibold">Sections</h2>
        <ul className="mt-2 grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-3">
          {tags.map((t) => (
            <li key={t.name}>
              <a href={`#${slug(t.name)}`} className="text-primary underline-offset-2 hover:underline">
                {t.name}
              </a>{" "}
              <span className="text-muted-foreground">
                ({operations.filter((o) => o.op.tags?.includes(t.name)).length})
              </span>
            </li>
          ))}
        </ul>
      </nav>
      {tags.map((t) => (
        <section key={t.name} aria-labelledby={slug(t.name)} className="mt-10">
          <h2 id={slug(t.name)} className="scroll-mt-4 border-b border-border pb-2 text-xl font-semibold">
            {t.name}
          </h2>
          <Paragraphs text={t.description} className="text-muted-foreground" />
          {operations
            .filter((o) => o.op.tags?.includes(t.name))
            .map((o) => (
              <OperationView
                key={`${o.method} ${o.path}`}
                path={o.path}
                method={o.method}
                op={o.op}
                schemas={schemas}
              />
            ))}
        </section>
      ))}
    </div>
  );
}

function OperationView({
  path,
  method,
  op,
  schemas,
}: {
  path: string;
  method: string;
  op: Operation;
  schemas: Record<string, Schema>;
}) {
  const body = op.requestBody?.content ? Object.entries(op.requestBody.content)[0] : undefined;
  return (
    <section aria-labelledby={`op-${op.operationId}`} className="mt-6 rounded-lg border border-border bg-card p-4">
      <h3 id={`op-${op.operationId}`} className="scroll-mt-4 text-base font-semibold">
        {op.summary ?? op.operationId}
      </h3>
      <p className="mt-2 flex min-w-0 flex-wrap items-center gap-2">
        <span
          className={`rounded px-1.5 py-0.5 font-mono text-xs font-semibold uppercase ${METHOD_TONE[method] ?? ""}`}
        >
          {method}
        </span>
        <code className="min-w-0 font-mono text-sm [overflow-wrap:anywhere]">{path}</code>
      </p>
      <Paragraphs text={op.description} />
      {op.parameters?.length ? (
        <FieldTable
          caption="Parameters"
          rows={op.parameters.map((p) => ({
            name: p.name,
            where: p.in,
            type: typeName(p.schema, schemas),
            required: !!p.required,
            description: p.description ?? resolve(p.schema, schemas)?.description,
          }))}
        />
      ) : null}
      {body ? (
        <>
          <h4 className="mt-4 text-sm font-semibold">
            Request body{" "}
            <span className="font-normal text-muted-foreground">
              ({body[0]}
              {op.requestBody?.required ? ", required" : ""})
            </span>
          </h4>
          <SchemaFields
            schema={body[1].schema}
            schemas={schemas}
            caption={`Request body of ${op.summary ?? op.operationId}`}
          />
        </>
      ) : null}
      <h4 className="mt-4 text-sm font-semibold">Responses</h4>
      <ul className="mt-1 space-y-1">
        {Object.entries(op.responses ?? {}).map(([status, r]) => {
          const content = r.content ? Object.entries(r.content)[0] : undefined;
          const ok = status.startsWith("2");
          return (
            <li key={status} className="text-sm">
              <LazyDetails
                summary={
                  <>
                    <span
                      className={`mr-2 rounded px-1.5 py-0.5 font-mono text-xs font-semibold ${ok ? "bg-success/15 text-success" : "bg-muted text-foreground"}`}
                    >
                      {status}
                    </span>
                    <Text text={(r.description ?? "").split(". See ")[0]} />
                  </>
                }
              >
                {content
                  ? () => (
                      <div className="mt-2 pl-4">
                        <p className="text-xs text-muted-foreground">{content[0]}</p>
                        <SchemaFields
                          schema={content[1].schema}
                          schemas={schemas}
                          caption={`Response ${status} of ${op.summary ?? op.operationId}`}
                        />
                      </div>
                    )
                  : undefined}
              </LazyDetails>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/**
 * A response's disclosure: its schema is rendered when it is first opened, not before (the page
 * lists every operation, and their response tables were most of its DOM: slow to lay out).
 */
function LazyDetails({ summary, children }: { summary: ReactNode; children?: () => ReactNode }) {
  const [opened, setOpened] = useState(false);
  return (
    <details onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary className="cursor-pointer rounded focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring">
        {summary}
      </summary>
      {opened && children ? children() : null}
    </details>
  );
}

function resolve(schema: Schema | undefined, schemas: Record<string, Schema>): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = schemas[s.$ref.split("/").pop()!];
  return s;
}

function typeName(schema: Schema | undefined, schemas: Record<string, Schema>): string {
  if (!schema) return "any";
  if (schema.$ref) return schema.$ref.split("/").pop()!;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map((v) => typeName(v, schemas)).join(" | ");
  if (schema.allOf?.length === 1) return typeName(schema.allOf[0], schemas);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type ?? "object");
  if (type === "array") return `${typeName(schema.items, schemas)}[]`;
  return `${type}${schema.format ? ` (${schema.format})` : ""}${schema.nullable ? " | null" : ""}`;
}

function SchemaFields({
  schema,
  schemas,
  caption,
}: {
  schema?: Schema;
  schemas: Record<string, Schema>;
  caption: string;
}) {
  const s = resolve(schema, schemas);
  const name = schema?.$ref ? schema.$ref.split("/").pop() : undefined;
  if (!s) return null;
  if (!s.properties)
    return (
      <p className="mt-1 text-sm">
        <code className="font-mono text-xs">{typeName(schema, schemas)}</code>
        {s.description ? (
          <>
            {" "}
            · <Text text={s.description} />
          </>
        ) : null}
      </p>
    );
  return (
    <FieldTable
      caption={name ? `${caption} (${name})` : caption}
      rows={Object.entries(s.properties).map(([prop, p]) => ({
        name: prop,
        type: typeName(p, schemas),
        required: (s.required ?? []).includes(prop),
        description: p.description ?? resolve(p, schemas)?.description,
      }))}
    />
  );
}

function FieldTable({
  caption,
  rows,
}: {
  caption: string;
  rows: Array<{ name: string; where?: string; type: string; required: boolean; description?: string }>;
}) {
  const where = rows.some((r) => r.where);
  return (
    <div
      className="relative mt-2 overflow-x-auto rounded-md border border-border"
      role="region"
      aria-label={caption}
      tabIndex={0}
    >
      <table className="w-full text-left text-xs">
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-muted text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Name
            </th>
            {where ? (
              <th scope="col" className="px-3 py-1.5 font-medium">
                In
              </th>
            ) : null}
            <th scope="col" className="px-3 py-1.5 font-medium">
              Type
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Description
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.where ?? ""}${r.name}`} className="border-t border-border align-top">
              <th scope="row" className="whitespace-nowrap px-3 py-1.5 font-mono font-medium">
                {r.name}
                {r.required ? (
                  <span className="ml-1 font-sans text-destructive" title="required">
                    required
                  </span>
                ) : null}
              </th>
              {where ? <td className="px-3 py-1.5">{r.where}</td> : null}
              <td className="min-w-32 max-w-64 px-3 py-1.5 font-mono [overflow-wrap:anywhere]">{r.type}</td>
              <td className="min-w-48 px-3 py-1.5 leading-5">
                {r.description ? <Text text={r.description} /> : <span className="text-muted-foreground">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
