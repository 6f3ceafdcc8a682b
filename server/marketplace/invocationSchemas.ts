import { z } from "zod";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: invoking a connector's action.

export const InvokeRequest = z
  .object({
    action: z.string().min(1).max(100).describe("An action id of the connector, within granted_permissions"),
    input: z.record(z.string(), z.unknown()).default({}).describe("Validated against the action's input_schema"),
  })
  .strict()
  .meta({ id: "InvokeConnectorRequest", example: { action: "get_authenticated_user", input: {} } });

export const InvokeError = z
  .object({
    code: z
      .enum([
        "outbound_refused",
        "outbound_timeout",
        "outbound_failed",
        "connector_answer_too_large",
        "connector_connection_expired",
      ])
      .describe("Why the provider's answer is missing or was dropped"),
    message: z.string(),
  })
  .describe("Why the provider's answer is missing or was dropped");

export const InvokeResult = z
  .object({
    invocation_id: z.string().describe("The invocation's record (`civ_…`), counted in the installation's usage"),
    status_code: z
      .number()
      .int()
      .nullable()
      .describe("The provider's HTTP status; null when it did not answer (see `error`)"),
    duration_ms: z.number().int().describe("Time spent calling the provider, in milliseconds"),
    result: z.unknown().describe("The provider's answer (JSON, else text); null when empty or dropped (see `error`)"),
    provenance_id: z.string().describe("The provenance record of this invocation"),
    successful: z.boolean().describe("The provider answered 2xx within the limits"),
    error: InvokeError.nullable().describe("Set when the provider could not be reached or its answer was dropped"),
  })
  .meta({
    id: "InvokeConnectorResult",
    example: {
      invocation_id: "civ_01m806mp6t2k9d8c7b6a5z4y3x",
      status_code: 200,
      duration_ms: 143,
      result: { login: "octocat" },
      provenance_id: EXAMPLE.recordId,
      successful: true,
      error: null,
    },
  });

export type InvokeResultT = z.infer<typeof InvokeResult>;
