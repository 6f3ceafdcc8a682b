import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

/**
 * Checks live answers against the OpenAPI document, the way a client generated from it (or a
 * validating proxy such as Prism) would: the status must be declared for the operation, the
 * media type declared for that status, and a JSON body must match its schema. The integration
 * suite runs every answer it receives through this (tests/integration/setup.ts wraps `fetch`), so
 * an area whose answers drift from the document fails its own tests, naming the operation, the
 * status and the place in the body that broke.
 *
 * Ajv (draft-07 dialect, which OpenAPI 3.0's Schema Object is a subset of, plus its `nullable`
 * keyword) compiles each response schema once, lazily, against the whole document so `$ref`s
 * resolve; `example` and `x-*` are annotations.
 */
type Json = Record<string, unknown>;

interface Route {
  method: string;
  template: string;
  operationId: string;
  regex: RegExp;
  /** Literal segments count: `/v1/agents/deploy` wins over `/v1/agents/{id}`. */
  literals: number;
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

export interface ResponseViolation {
  operation: string;
  status: number;
  message: string;
}

const DOC_ID = "openapi.json";

export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly routes: Route[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, discriminator: true });
    addFormats(this.ajv);
    this.ajv.addKeyword({ keyword: "example" });
    this.ajv.addSchema(doc, DOC_ID);
    const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
        this.routes.push({
          method: method.toUpperCase(),
          template,
          operationId: String(op.operationId ?? `${method} ${template}`),
          regex: new RegExp(`^${source}$`),
          literals: template.split("/").filter((s) => s && !s.startsWith("{")).length,
          responses: (op.responses ?? {}) as Route["responses"],
        });
      }
    }
    this.routes.sort((a, b) => b.literals - a.literals);
  }

  /** The operation a request reaches, or undefined for a path and method the document does not name (a 404 or 405 of the router). */
  route(method: string, pathname: string): Route | undefined {
    return this.routes.find((r) => r.method === method.toUpperCase() && r.regex.test(pathname));
  }

  /**
   * The violations of one answer ([] when it keeps the document). `body` is the parsed JSON body
   * (undefined when empty or not JSON); `contentType` the response's header.
   */
  check(input: {
    method: string;
    pathname: string;
    status: number;
    contentType: string | null;
    body: unknown;
    bodyText?: string;
  }): ResponseViolation[] {
    const route = this.route(input.method, input.pathname);
    if (!route) return [];
    const label = `${route.method} ${route.template} (${route.operationId})`;
    const declared =
      route.responses[String(input.status)] ??
      route.responses[`${String(input.status)[0]}XX`] ??
      route.responses.default;
    if (!declared) {
      return [
        {
          operation: label,
          status: input.status,
          message: `${label} answered ${input.status}, which the document does not declare (declared: ${Object.keys(route.responses).join(", ")})`,
        },
      ];
    }
    const content = declared.content ?? {};
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) return [];
    const mediaType = (input.contentType ?? "").split(";")[0]!.trim().toLowerCase();
    if (!mediaType && (input.bodyText ?? "") === "") {
      return [
        {
          operation: label,
          status: input.status,
          message: `${label} answered ${input.status} with no body; the document declares ${mediaTypes.join(", ")}`,
        },
      ];
    }
    if (!mediaTypes.includes(mediaType)) {
      return [
        {
          operation: label,
          status: input.status,
          message: `${label} answered ${input.status} as ${mediaType || "(no content type)"}; the document declares ${mediaTypes.join(", ")}`,
        },
      ];
    }
    if (!/^application\/([a-z0-9.+-]+\+)?json$/.test(mediaType) || !content[mediaType]?.schema) return [];
    const pointer = `#/paths/${escapePointer(route.template)}/${route.method.toLowerCase()}/responses/${input.status in route.responses ? input.status : "default"}/content/${escapePointer(mediaType)}/schema`;
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(input.body)) return [];
    return (validate.errors ?? []).map((e) => ({
      operation: label,
      status: input.status,
      message: `${label} answered ${input.status}: body ${describe(e, input.body)}`,
    }));
  }
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1").replace(/\{/g, "%7B").replace(/\}/g, "%7D");
}

function at(body: unknown, pointer: string): unknown {
  let node = body;
  for (const part of pointer.split("/").slice(1)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = node && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

function describe(e: ErrorObject, body: unknown): string {
  const where = e.instancePath || "(root)";
  const got = JSON.stringify(at(body, e.instancePath));
  const detail =
    e.keyword === "enum"
      ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")})`
      : e.keyword === "additionalProperties"
        ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"`
        : "";
  return `${where} ${e.message}${detail}; got ${got === undefined ? "nothing" : got.length > 200 ? `${got.slice(0, 200)}…` : got}`;
}
