import { z } from "zod";
import { ListQuery } from "../http/listSchemas";
import { Capability, CapabilityUsage, USAGE_EXAMPLE_ROWS } from "../identity/schemas";
import { isEventPattern, isTriggerCapability, TRIGGER_CAPABILITY } from "../events/schemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod (the console's deploy and invoke forms import these): service maxima that come from
// the environment (SVC_AGENT_MAX_MEMORY_MB, SVC_AGENT_MAX_TIMEOUT_MS, SVC_MAX_BUNDLE_BYTES) are
// checked by the services, which answer the same 400 OUT_OF_RANGE on the same field.

export const AGENT_EXAMPLE = {
  agentId: "agt_01m806mp6t3m7bq1xkz3k9r2hd",
  versionId: "agv_01m806mp6t8f2n4d0qk5j7x1ce",
  executionId: "exe_01m806mp6v2d8h5qz0w3c6p9ka",
  jobId: "job_01m806mp6v7k1s0d9x4e2f8b3m",
  bundleHash: "sha256:210e2bf95841dcd9fd92852686ea5301a0a65ed782080135027ec98c623c6924",
  // `export default async (input, ctx) => { ctx.progress(50, "half"); return { ok: true, echo: input }; }`
  bundleBase64:
    "ZXhwb3J0IGRlZmF1bHQgYXN5bmMgKGlucHV0LCBjdHgpID0+IHsgY3R4LnByb2dyZXNzKDUwLCAiaGFsZiIpOyByZXR1cm4geyBvazogdHJ1ZSwgZWNobzogaW5wdXQgfTsgfQ==",
  updatedAt: "2026-11-21T09:31:12.000Z",
} as const;

const Did = z
  .string()
  .min(8)
  .max(512)
  .regex(/^did:[a-z0-9]+:[A-Za-z0-9._:%\-]+$/, "must be a DID (did:<method>:<id>)");
const Timestamp = z.string().describe("ISO 8601 date-time");

export const AgentStatus = z.enum(["active", "inactive", "deploying"]);

export const ManifestCapability = z
  .object({
    id: z
      .string()
      .min(3)
      .max(220)
      .superRefine((value, ctx) => {
        if (isTriggerCapability(value)) {
          if (value !== TRIGGER_CAPABILITY && !isEventPattern(value.slice(TRIGGER_CAPABILITY.length + 1)))
            ctx.addIssue({
              code: "custom",
              message: "must be event_trigger or event_trigger:<event type or prefix.*>",
              params: { code: "INVALID_FORMAT" },
            });
          return;
        }
        const parsed = Capability.safeParse(value);
        if (!parsed.success)
          for (const issue of parsed.error.issues)
            ctx.addIssue({
              code: "custom",
              message: issue.message,
              params: { code: (issue as { params?: { code?: string } }).params?.code ?? "INVALID_FORMAT" },
            });
      })
      .describe(
        "A capability the agent's runs may use (the deployer must hold it), or a trigger declaration: event_trigger and event_trigger:<on entry's event>",
      ),
    evidence: z.array(z.string().min(1).max(500)).max(20).describe("Why the agent needs it (shown to reviewers)"),
  })
  .strict();

export const ManifestTrigger = z
  .object({
    event: z
      .string()
      .min(1)
      .max(200)
      .regex(
        /^[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?$/,
        "must be an event type such as invoice.received, optionally ending in .*",
      ),
    description: z.string().max(500),
  })
  .strict();

export const ManifestLimits = z
  .object({
    memory_mb: z
      .number()
      .int()
      .min(8)
      .describe("Heap of one run in MiB; at most SVC_AGENT_MAX_MEMORY_MB (default 256); default 64")
      .optional(),
    timeout_ms: z
      .number()
      .int()
      .min(10)
      .describe("Wall-clock limit of one run; at most SVC_AGENT_MAX_TIMEOUT_MS (default 300000); default 30000")
      .optional(),
  })
  .strict();

export const AgentManifest = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[a-z0-9][a-z0-9._-]*$/, "must be lower-case letters, digits, '.', '_' or '-'")
      .describe("Unique in the organization; deploying the same name again adds a version"),
    version: z.string().min(1).max(50),
    description: z.string().max(2000).optional(),
    capabilities: z.array(ManifestCapability).max(50),
    on: z.array(ManifestTrigger).max(50).optional(),
    passport: Did.optional().describe("An agent passport of the organization the agent acts as"),
    limits: ManifestLimits.optional(),
    redact_input: z
      .boolean()
      .optional()
      .describe(
        "true: an execution's input is kept for its run (and retries) but never shown, in the API or the console (for inputs carrying personal data or secrets); default false",
      ),
  })
  .strict()
  .meta({
    id: "AgentManifest",
    example: {
      name: "invoice-triage",
      version: "1.2.0",
      description: "Reads supplier invoices and routes them for approval",
      capabilities: [{ id: "svc_api:agents:read", evidence: ["Looks up the approver agent"] }],
      on: [{ event: "invoice.received", description: "A supplier invoice arrived" }],
      limits: { memory_mb: 64, timeout_ms: 30000 },
    },
  });

export const AgentDeployRequest = z
  .object({
    manifest: AgentManifest,
    bundleBase64: z
      .string()
      .min(1)
      .max(1_400_000)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be standard base64")
      .describe(
        "The bundle: one ES module, UTF-8, whose default export is async (input, ctx) => result; at most SVC_MAX_BUNDLE_BYTES (default 512 KiB) decoded",
      ),
    bundleHash: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, "must be sha256: and 64 lower-case hex digits")
      .describe("sha256: + the lower-case hex SHA-256 of the decoded bundle"),
    profile: z.string().min(1).max(100).optional(),
    region: z.string().min(1).max(100).optional(),
    wait: z
      .boolean()
      .optional()
      .describe("Answer 201 once the bundle is checked (the check takes at most 5 s), instead of 202 at once"),
  })
  .strict()
  .meta({
    id: "AgentDeployRequest",
    example: {
      manifest: {
        name: "invoice-triage",
        version: "1.2.0",
        description: "Reads supplier invoices and routes them for approval",
        capabilities: [{ id: "svc_api:agents:read", evidence: ["Looks up the approver agent"] }],
        limits: { memory_mb: 64, timeout_ms: 30000 },
      },
      bundleBase64: AGENT_EXAMPLE.bundleBase64,
      bundleHash: AGENT_EXAMPLE.bundleHash,
      wait: true,
    },
  });

export const AgentDeployResponse = z
  .object({
    data: z.object({
      agentId: z.string(),
      status: z.string().describe("deploying (202), or the agent's status once checked (201)"),
      trace_id: z.string().optional(),
    }),
  })
  .meta({
    id: "AgentDeployResponse",
    example: { data: { agentId: AGENT_EXAMPLE.agentId, status: "deploying", trace_id: EXAMPLE.requestId } },
  });

const agentExample = {
  id: AGENT_EXAMPLE.agentId,
  name: "invoice-triage",
  capabilities: ["svc_api:agents:read"],
  owner_org_passport_id: EXAMPLE.rootOrgDid,
  status: "active" as const,
  description: "Reads supplier invoices and routes them for approval",
  passport_id: null,
  version: "1.2.0",
  updated_at: "2026-11-21T09:31:12.000Z",
};

export const Agent = z
  .object({
    id: z.string(),
    name: z.string(),
    capabilities: z.array(z.string()),
    owner_org_passport_id: z.string(),
    status: AgentStatus,
    description: z.string().nullable().optional(),
    passport_id: z.string().nullable().optional(),
    version: z
      .string()
      .nullable()
      .optional()
      .describe("The current version's manifest version (null before a first deploy succeeds)"),
    updated_at: Timestamp.optional().describe("When the agent last changed (deploy, activation, deactivation)"),
  })
  .meta({ id: "Agent", example: agentExample });

export const AgentListQuery = ListQuery.extend({
  status: AgentStatus.optional().describe("Only agents in this status"),
});

export const AgentListResponse = z
  .object({
    data: z.object({ agents: z.array(Agent), next_cursor: z.string().nullable().optional() }),
    meta: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .meta({ id: "AgentListResponse", example: { data: { agents: [agentExample], next_cursor: null } } });

export const DeployError = z.object({ code: z.string(), message: z.string() }).passthrough();

export const AgentVersionSummary = z.object({
  seq: z.number().int(),
  version: z.string(),
  status: z.enum(["deploying", "ready", "rejected"]),
  bundle_hash: z.string(),
  limits: z.object({ memory_mb: z.number().int(), timeout_ms: z.number().int() }),
  error: DeployError.nullable(),
  deployed_at: Timestamp.nullable(),
  created_at: Timestamp,
});

export const AgentRuntime = z
  .object({
    engine: z.literal("quickjs-wasm"),
    limits: z.object({ memory_mb: z.number().int(), timeout_ms: z.number().int() }).nullable(),
    bundle_hash: z.string().nullable(),
    deployed_at: Timestamp.nullable().describe("When the current version became ready"),
    error: DeployError.nullable().describe("Why the agent is inactive after a failed first deploy"),
    last_deploy: AgentVersionSummary.nullable().describe(
      "The latest deploy, which may still be checking or may have been rejected",
    ),
    versions: z.array(AgentVersionSummary).describe("Newest first, at most 20"),
  })
  .describe("The current version's runtime, and the deploys");

export const AgentStatusResponse = z
  .object({
    data: z.object({
      id: z.string(),
      name: z.string(),
      status: AgentStatus,
      owner_org_passport_id: z.string(),
      description: z.string().nullable(),
      version: z.string().nullable(),
      runtime: AgentRuntime.nullable(),
      passport_id: z.string().nullable(),
      capabilities: z.array(z.string()),
      updated_at: Timestamp,
    }),
  })
  .meta({
    id: "AgentStatusResponse",
    example: (() => {
      const v = {
        seq: 2,
        version: "1.2.0",
        status: "ready" as const,
        bundle_hash: AGENT_EXAMPLE.bundleHash,
        limits: { memory_mb: 64, timeout_ms: 30000 },
        error: null,
        deployed_at: AGENT_EXAMPLE.updatedAt,
        created_at: EXAMPLE.createdAt,
      };
      return {
        data: {
          ...agentExample,
          version: "1.2.0",
          runtime: {
            engine: "quickjs-wasm" as const,
            limits: v.limits,
            bundle_hash: v.bundle_hash,
            deployed_at: v.deployed_at,
            error: null,
            last_deploy: v,
            versions: [v],
          },
          updated_at: AGENT_EXAMPLE.updatedAt,
        },
      };
    })(),
  });

export const AgentIdParams = z.object({ id: z.string().min(1).max(100) });

export const InvokeRequest = z
  .object({
    input: z.unknown().optional().describe("JSON given to the handler as its first argument"),
    callback_url: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe(
        "POSTed the execution, signed with the organization's callback secret (Standard Webhooks), when it ends",
      ),
    max_attempts: z
      .number()
      .int()
      .min(1)
      .max(10)
      .default(3)
      .describe("Runs allowed before the execution fails, 1 to 10"),
  })
  .strict()
  .meta({
    id: "InvokeRequest",
    example: {
      input: { invoice_id: "inv_2041", amount: 1250 },
      callback_url: "https://hooks.example.com/svc/executions",
      max_attempts: 3,
    },
  });

/** GET /v1/agents/{id}/usage: the agent's declared capabilities against what its runs used. */
export const AgentUsage = z
  .object({
    agent_id: z.string(),
    since: Timestamp.describe("Counted from: the start of the UTC day of the `since` asked for"),
    capabilities: z
      .array(CapabilityUsage)
      .describe(
        "Every capability the agent's manifest declares (trigger declarations aside), then any its runs were refused that it does not declare; counted over its runs' delegations",
      ),
    unused: z.array(z.string()).describe("Declared capabilities no run used since `since`"),
    runs: z.number().int().min(0).describe("Runs (executions) started since `since`, counted in"),
  })
  .meta({
    id: "AgentUsage",
    example: {
      agent_id: "agt_01m806mp6sqd5pnwx2e1rmm0ba",
      since: "2026-10-22T00:00:00.000Z",
      capabilities: USAGE_EXAMPLE_ROWS,
      unused: ["svc_api:passports:read"],
      runs: 57,
    },
  });
