import { z } from "zod";
import { operations } from "../http/operations";
import type { Operation } from "../http/operation";
import { SERVICE_VERSION } from "../meta/health";

/**
 * The OpenAPI 3.0.3 document, generated from the same zod schemas the gate validates with. Every
 * schema with a `.meta({ id })` becomes a component; each operation refers to its components.
 */
const problemSchema = {
  type: "object",
  required: ["type", "title", "status", "detail"],
  properties: {
    type: { type: "string", format: "uri" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    instance: { type: "string" },
    request_id: { type: "string" },
    incident_id: { type: "string" },
    documentation_url: { type: "string", format: "uri" },
    errors: {
      type: "array",
      items: {
        type: "object",
        required: ["field", "code", "message"],
        properties: { field: { type: "string" }, code: { type: "string" }, message: { type: "string" }, expected: { type: "string" }, received: { type: "string" } },
      },
    },
    remediation: {
      type: "array",
      items: { type: "object", required: ["step", "description"], properties: { step: { type: "integer" }, description: { type: "string" }, link: { type: "string", format: "uri" } } },
    },
  },
  additionalProperties: true,
};

type Json = Record<string, unknown>;

function componentsFor(io: "input" | "output"): Record<string, Json> {
  const out = z.toJSONSchema(z.globalRegistry, { target: "openapi-3.0", io, unrepresentable: "any", uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, Json> };
  for (const schema of Object.values(out.schemas)) {
    delete schema.$schema;
    delete schema.id;
  }
  return out.schemas;
}

function idOf(schema: z.ZodType | undefined): string | undefined {
  return schema ? (z.globalRegistry.get(schema)?.id as string | undefined) : undefined;
}

function inline(schema: z.ZodType, io: "input" | "output"): Json {
  const json = z.toJSONSchema(schema, { target: "openapi-3.0", io, unrepresentable: "any" }) as Json;
  delete json.$schema;
  return json;
}

function parameters(op: Operation): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [["path", op.params], ["query", op.query]] as const) {
    if (!schema) continue;
    const json = inline(schema, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({ name, in: where, required: where === "path" || (json.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) });
    }
  }
  return out;
}

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } } });

function operationObject(op: Operation): Json {
  const responseId = idOf(op.response);
  const bodyId = idOf(op.body);
  const responses: Json = {
    [String(op.successStatus)]: {
      description: "Success",
      content: op.responseType
        ? { [op.responseType]: { schema: { type: "string" } } }
        : { "application/json": { schema: responseId ? { $ref: `#/components/schemas/${responseId}` } : inline(op.response, "output") } },
    },
    "400": problem("Validation failed"),
    "401": problem("Missing, invalid, expired or revoked token"),
    "403": problem("The delegation does not cover this operation"),
    "429": problem("Rate limited"),
  };
  if (op.params) responses["404"] = problem("Not found (or belongs to another organization)");
  if (op.method !== "GET") {
    responses["409"] = problem("Conflict or illegal state transition");
    if (op.body) {
      responses["413"] = problem("Body too large");
      responses["415"] = problem("Body is not JSON");
    }
  }
  if (op.method === "POST") responses["422"] = problem("Idempotency-Key reused with a different body");
  const params = parameters(op);
  if (op.method === "POST") params.push({ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", maxLength: 255 }, description: "Repeat a POST safely: the same key and body return the first response." });
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? { requestBody: { required: !op.bodyOptional, content: { "application/json": { schema: bodyId ? { $ref: `#/components/schemas/${bodyId}` } : inline(op.body, "input") } } } }
      : {}),
    responses,
    "x-capability": op.capability,
  };
}

let cached: Json | undefined;

export function openApiDocument(): Json {
  if (cached) return cached;
  const inputs = componentsFor("input");
  const outputs = componentsFor("output");
  const requestIds = new Set(operations.map((op) => idOf(op.body)).filter(Boolean));
  const schemas: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(outputs)) schemas[id] = requestIds.has(id) ? inputs[id]! : schema;
  schemas.ProblemDetails = problemSchema;

  const paths: Record<string, Json> = {
    "/v1/health": {
      get: {
        operationId: "getHealth",
        summary: "Service health",
        tags: ["Meta"],
        security: [],
        responses: { "200": { description: "Healthy", content: { "application/json": { schema: { type: "object", properties: { status: { type: "string" }, version: { type: "string" }, database: { type: "string" } } } } } }, "503": { description: "The database does not answer" } },
      },
    },
    "/v1/openapi.json": { get: { operationId: "getOpenApi", summary: "This document", tags: ["Meta"], security: [], responses: { "200": { description: "OpenAPI 3.0.3" } } } },
  };
  for (const op of operations) {
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = operationObject(op);
  }
  cached = {
    openapi: "3.0.3",
    info: {
      title: "svc API",
      version: SERVICE_VERSION,
      description:
        "The governed agent platform. Every call is authenticated with a delegation token, authorized against the delegation's capabilities, and recorded as a provenance record. Errors are RFC 7807 problem details.",
    },
    servers: [{ url: "/" }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(operations.map((o) => o.tag))].map((name) => ({ name })).concat([{ name: "Meta" }]),
    paths,
    components: { schemas, securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } } },
  };
  return cached;
}

export async function openApiResponse(): Promise<Response> {
  return Response.json(openApiDocument());
}
