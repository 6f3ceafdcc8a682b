import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the connector catalogue's shapes (a connector file, a listing, its details).

export const Timestamp = z.string().describe("ISO 8601 date-time");

export const Uri = z.string().describe("An absolute URI");

export const PricingModel = z.enum(["free", "paid", "freemium"]);

export const DeploymentMode = z.enum(["cloud", "hybrid", "self-hosted"]);

export const HealthStatus = z.enum(["healthy", "degraded", "down", "unknown"]);

export const HttpMethodName = z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/** A connector id: lowercase words joined by `-` (it names the file and the env variables). */
export const ConnectorId = z
  .string()
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "lowercase letters, digits and single dashes")
  .max(64);

/** A JSON Schema, as an object; compiled with ajv when the catalogue loads. */
const JsonSchemaObject = z.record(z.string(), z.unknown()).describe("A JSON Schema (draft 2020-12 or 7)");

export const ConnectorAction = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9_.-]+$/)
      .max(100)
      .describe("The action's id, unique within its connector"),
    description: z.string().max(1000),
    method: HttpMethodName,
    path: z
      .string()
      .max(500)
      .regex(/^\//, "starts with /")
      .describe("Path on the provider's API; `{name}` segments are filled from the input"),
    input_schema: JsonSchemaObject,
    scopes: z.array(z.string().max(200)).max(50).optional().describe("OAuth scopes the action needs"),
  })
  .strict();

export const ConnectorOAuthSettings = z
  .object({
    required: z.boolean(),
    scopes: z.array(z.string().max(200)).max(100),
    authorization_url: z.url().optional(),
    token_url: z.url().optional(),
    revocation_url: z.url().optional(),
    client_id: z.string().max(500).optional(),
    client_secret: z.string().max(500).optional(),
    pkce: z.literal(true).optional().describe("PKCE S256 is always used; the field is accepted for clarity"),
    /** The issuer identifier the provider puts in `iss` on its authorization answer (RFC 9207). */
    issuer: z.url().optional(),
    /** Extra parameters on the authorization URL (say Google's `access_type=offline`). */
    authorization_params: z.record(z.string(), z.string().max(200)).optional(),
    /** How the scopes are joined on the authorization URL (Slack and GitHub use `,` in places; default space). */
    scope_separator: z.string().max(3).optional(),
  })
  .strict()
  .refine((o) => !o.required || (o.authorization_url && o.token_url), {
    message: "authorization_url and token_url are needed when OAuth is required",
  });

/** One connector file (`server/marketplace/connectors/*.json` or `SVC_CONNECTORS_DIR`). */
export const ConnectorDefinition = z
  .object({
    $schema: z.string().optional(),
    connector_id: ConnectorId,
    name: z.string().min(1).max(100),
    provider: z.string().min(1).max(100),
    description: z.string().min(1).max(500),
    long_description: z.string().max(50_000).describe("Markdown"),
    icon_url: z
      .string()
      .max(2000)
      .refine((v) => v.startsWith("/") || URL.canParse(v), "an absolute URL or a path on this service (/connectors/…)")
      .describe("An absolute URL, or a path served by svc (public/connectors/) made absolute with SVC_PUBLIC_URL"),
    version: z.string().min(1).max(50),
    publisher: z
      .object({ publisher_id: z.string().min(1).max(100), name: z.string().min(1).max(200), verified: z.boolean() })
      .strict(),
    certified: z.boolean(),
    pricing_model: PricingModel,
    capabilities: z.array(z.string().max(200)).max(100),
    deployment_modes: z.array(DeploymentMode).min(1),
    configuration_schema: JsonSchemaObject,
    api_base_url: z.url(),
    /** Headers every action sends (say `notion-version`); never a credential. */
    api_headers: z.record(z.string().regex(/^[a-z0-9-]+$/), z.string().max(500)).optional(),
    /** Path probed by the worker's health check (GET, no token); the base URL itself when absent. */
    health_check_path: z.string().max(500).optional(),
    /** What one invocation costs (a paid provider's list price), counted in usage; 0 when absent. */
    cost_per_invocation_usd: z.number().min(0).max(1000).optional(),
    oauth: ConnectorOAuthSettings,
    actions: z.array(ConnectorAction).min(1).max(200),
  })
  .strict();

export type ConnectorDefinition = z.infer<typeof ConnectorDefinition>;

const LISTING_EXAMPLE = {
  connector_id: "github",
  name: "GitHub",
  provider: "GitHub",
  description: "Issues, pull requests and repositories of GitHub.",
  icon_url: "https://github.githubassets.com/favicons/favicon.svg",
  version: "1.0.0",
  publisher_id: "svc",
  certified: true,
  pricing_model: "free" as const,
  capabilities: ["issues:read", "issues:write", "repos:read"],
  install_count: 12,
  rating_average: 4.5,
  rating_count: 4,
  oauth: { required: true, scopes: ["repo", "read:user"] },
  deployment_modes: ["cloud" as const, "hybrid" as const],
  health_status: "healthy" as const,
  created_at: EXAMPLE.createdAt,
};

const OAuthSummary = z.object({
  required: z.boolean(),
  scopes: z.array(z.string()).describe("The scopes an installation asks for"),
});

export const MarketplaceConnectorListing = z
  .object({
    connector_id: z.string(),
    name: z.string(),
    provider: z.string(),
    description: z.string(),
    icon_url: Uri,
    version: z.string(),
    publisher_id: z.string().describe('"svc" for the core connectors'),
    certified: z.boolean(),
    pricing_model: PricingModel,
    capabilities: z.array(z.string()).describe("Capability ids of the connector's actions"),
    install_count: z.number().int().describe("Installations now active or suspended, every organization"),
    rating_average: z.number().min(0).max(5).nullable().describe("0.00 to 5.00; null before the first rating"),
    rating_count: z.number().int(),
    oauth: OAuthSummary,
    deployment_modes: z.array(DeploymentMode),
    health_status: HealthStatus,
    created_at: Timestamp,
  })
  .meta({ id: "MarketplaceConnectorListing", example: LISTING_EXAMPLE });

export const ConnectorListQuery = ListQuery.extend({
  q: z.string().max(200).optional().describe("Words searched in name, provider, description and capabilities"),
  capability: z.string().max(200).optional().describe("Only connectors offering this capability id"),
  pricing_model: PricingModel.optional(),
  certified: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .describe("Only certified (true) or uncertified (false) connectors"),
  deployment_mode: DeploymentMode.optional().describe("Only connectors supporting this deployment mode"),
  publisher_id: z.string().max(100).optional(),
});

export const ConnectorList = z.object({ data: z.array(MarketplaceConnectorListing), pagination: PaginationInfo }).meta({
  id: "ConnectorList",
  example: { data: [LISTING_EXAMPLE], pagination: { has_more: false, next_cursor: null, total_count: 1 } },
});

export const ConnectorStatistics = z.object({
  install_count: z.number().int(),
  rating_average: z.number().min(0).max(5).nullable(),
  rating_count: z.number().int(),
  invocation_count_30d: z.number().int().describe("Logged invocations of the last 30 days, every organization"),
});

export const ConnectorActionSummary = z.object({
  id: z.string(),
  description: z.string(),
  method: HttpMethodName,
  path: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  scopes: z.array(z.string()),
});

export const ConnectorDetails = z
  .object({
    connector_id: z.string(),
    name: z.string(),
    provider: z.string(),
    description: z.string(),
    long_description: z.string().describe("Markdown (render it sanitized)"),
    icon_url: Uri,
    version: z.string(),
    publisher: z.object({ publisher_id: z.string(), name: z.string(), verified: z.boolean() }),
    certified: z.boolean(),
    pricing_model: PricingModel,
    capabilities: z.array(z.string()),
    deployment_modes: z.array(DeploymentMode),
    configuration_schema: z.record(z.string(), z.unknown()).describe("JSON Schema of an installation's config"),
    oauth: z.object({
      required: z.boolean(),
      scopes: z.array(z.string()),
      authorization_url: Uri.nullable().describe("null for connectors without OAuth"),
      token_url: Uri.nullable().describe("null for connectors without OAuth"),
    }),
    statistics: ConnectorStatistics,
    health_status: HealthStatus,
    last_health_check_at: Timestamp.nullable(),
    actions: z.array(ConnectorActionSummary).describe("What an installation can invoke"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({
    id: "ConnectorDetails",
    example: {
      ...LISTING_EXAMPLE,
      long_description: "## GitHub\nRead and write issues.",
      publisher: { publisher_id: "svc", name: "svc", verified: true },
      configuration_schema: { type: "object", properties: {}, additionalProperties: false },
      oauth: {
        required: true,
        scopes: ["repo", "read:user"],
        authorization_url: "https://github.com/login/oauth/authorize",
        token_url: "https://github.com/login/oauth/access_token",
      },
      statistics: { install_count: 12, rating_average: 4.5, rating_count: 4, invocation_count_30d: 310 },
      last_health_check_at: EXAMPLE.createdAt,
      actions: [
        {
          id: "get_authenticated_user",
          description: "The user the installation acts as",
          method: "GET",
          path: "/user",
          input_schema: { type: "object", properties: {}, additionalProperties: false },
          scopes: ["read:user"],
        },
      ],
      updated_at: EXAMPLE.createdAt,
    },
  });

export const ConnectorIdParams = z.object({ id: z.string().min(1).max(100) });
