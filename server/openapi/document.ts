import { z } from "zod";
import type { Operation } from "../http/operation";
import { registeredOperations } from "../http/operationRegistry";
import { SERVICE_VERSION } from "../meta/health";
import { EXAMPLE } from "./examples";
import { problemCodesOf, problemResponses } from "./problems";
import { toSchema30 } from "./schema30";
import { processWide } from "../processWide";

/**
 * The OpenAPI 3.0.3 document, generated from the same zod schemas the gate validates with. Every
 * schema with a `.meta({ id })` becomes a component; each operation refers to its components.
 * Everything zod emits passes through `toSchema30`, so strict 3.0 validators and the code
 * generators built on them accept the document.
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
        properties: {
          field: { type: "string" },
          code: { type: "string" },
          message: { type: "string" },
          expected: { type: "string" },
          received: { type: "string" },
        },
      },
    },
    remediation: {
      type: "array",
      items: {
        type: "object",
        required: ["step", "description"],
        properties: {
          step: { type: "integer" },
          description: { type: "string" },
          link: { type: "string", format: "uri" },
        },
      },
    },
  },
  additionalProperties: true,
  example: {
    type: "https://svc.example.com/docs/errors#forbidden",
    title: "Forbidden",
    status: 403,
    detail: "The delegation does not grant svc_api:passports:write.",
    instance: "/v1/passports",
    request_id: EXAMPLE.requestId,
    missing_capability: "svc_api:passports:write",
  },
};

type Json = Record<string, unknown>;

const healthSchema = {
  type: "object",
  required: ["status", "version", "database"],
  properties: {
    status: { type: "string", enum: ["ok", "unavailable"] },
    version: { type: "string" },
    database: { type: "string", description: "sqlite or postgresql" },
  },
  example: { status: "ok", version: SERVICE_VERSION, database: "postgresql" },
};

function componentsFor(io: "input" | "output"): Record<string, Json> {
  const out = z.toJSONSchema(z.globalRegistry, {
    target: "openapi-3.0",
    io,
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  return Object.fromEntries(Object.entries(out.schemas).map(([id, schema]) => [id, toSchema30(schema)]));
}

function idOf(schema: z.ZodType | undefined): string | undefined {
  return schema ? (z.globalRegistry.get(schema)?.id as string | undefined) : undefined;
}

function inline(schema: z.ZodType, io: "input" | "output"): Json {
  return toSchema30(z.toJSONSchema(schema, { target: "openapi-3.0", io, unrepresentable: "any" }));
}

function parameters(op: Operation): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ["path", op.params],
    ["query", op.query],
  ] as const) {
    if (!schema) continue;
    const json = inline(schema, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  return out;
}

function operationObject(op: Operation): Json {
  const responseId = idOf(op.response);
  const bodyId = idOf(op.body);
  const success = (description: string) => ({
    description,
    content: op.responseType
      ? { [op.responseType]: { schema: inline(op.response, "output") } }
      : {
          "application/json": {
            schema: responseId ? { $ref: `#/components/schemas/${responseId}` } : inline(op.response, "output"),
          },
        },
  });
  const redirect = op.successStatus >= 300 && op.successStatus < 400;
  const responses: Json = {
    [String(op.successStatus)]: redirect
      ? {
          description: "Redirect (see the description for where)",
          headers: { Location: { description: "Where the browser goes next", schema: { type: "string" } } },
        }
      : success("Success"),
    ...Object.fromEntries(
      (op.otherSuccessStatuses ?? []).map((status) => [
        String(status),
        success("Success (see the description for when)"),
      ]),
    ),
    ...problemResponses(problemCodesOf(op), op.path),
  };
  const params = parameters(op);
  if (op.method === "POST")
    params.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      schema: { type: "string", maxLength: 255 },
      description: "Repeat a POST safely: the same key and body return the first response.",
    });
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: !op.bodyOptional,
            content: {
              "application/json": {
                schema: bodyId ? { $ref: `#/components/schemas/${bodyId}` } : inline(op.body, "input"),
              },
            },
          },
        }
      : {}),
    responses,
    ...(op.authenticateRequest ? { security: [] } : {}),
    "x-capability": op.capability,
  };
}

const built = processWide("openapi.document", () => ({ document: undefined as Json | undefined }));

export function openApiDocument(): Json {
  if (built.document) return built.document;
  const operations = registeredOperations();
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
        responses: {
          "200": { description: "Healthy", content: { "application/json": { schema: healthSchema } } },
          "503": {
            description: "The database does not answer",
            content: {
              "application/json": {
                schema: {
                  ...healthSchema,
                  example: { status: "unavailable", version: SERVICE_VERSION, database: "postgresql" },
                },
              },
            },
          },
        },
      },
    },
    "/v1/openapi.json": {
      get: {
        operationId: "getOpenApi",
        summary: "This document",
        tags: ["Meta"],
        security: [],
        responses: {
          "200": {
            description: "OpenAPI 3.0.3",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["openapi", "info", "paths"],
                  properties: {
                    openapi: { type: "string" },
                    info: { type: "object", additionalProperties: true },
                    paths: { type: "object", additionalProperties: true },
                  },
                  additionalProperties: true,
                  example: { openapi: "3.0.3", info: { title: "svc API", version: SERVICE_VERSION }, paths: {} },
                },
              },
            },
          },
        },
      },
    },
  };
  for (const op of operations) {
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = operationObject(op);
  }
  built.document = {
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
  return built.document;
}

export async function openApiResponse(): Promise<Response> {
  return Response.json(openApiDocument());
}
