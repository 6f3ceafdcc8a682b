import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's marketplace pages import these. The response shapes are the spec's
// (MarketplaceConnectorListing, ConnectorDetails, InstallationPendingOAuth, InstallationActive,
// ConnectorInstallation, ConnectorRating, RatingSummary, InstallationUsage), field for field.

const Timestamp = z.string().describe("ISO 8601 date-time");
const Uri = z.string().describe("An absolute URI");

export const PricingModel = z.enum(["free", "paid", "freemium"]);
export const DeploymentMode = z.enum(["cloud", "hybrid", "self-hosted"]);
export const HealthStatus = z.enum(["healthy", "degraded", "down", "unknown"]);
/** What the API shows of an installation; `pending_oauth` and `expired` exist only before activation. */
export const InstallationStatus = z.enum(["active", "suspended", "uninstalled"]);
/** Every state an installation row can be in (server side). */
export const InstallationRowStatus = z.enum(["pending_oauth", "active", "suspended", "uninstalled", "expired"]);
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
export const InstallationIdParams = z.object({ id: z.string().min(1).max(100) });

export const InstallRequest = z
  .object({
    deployment_mode: DeploymentMode.describe("One of the connector's deployment_modes"),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("Validated against the connector's configuration_schema"),
    granted_permissions: z
      .array(z.string().min(1).max(100))
      .max(200)
      .optional()
      .describe("Action ids the installation may invoke; every action of the connector when absent"),
    redirect_uri: z
      .url()
      .max(2000)
      .optional()
      .describe(
        "Where the browser lands after the provider's consent; must be this service's /v1/marketplace/oauth/callback (the default)",
      ),
    base_url: z
      .url()
      .max(2000)
      .optional()
      .describe(
        "Replaces the connector's API base URL for this installation (a self-hosted provider); private addresses are refused unless SVC_OUTBOUND_ALLOW lists them",
      ),
  })
  .strict()
  .meta({
    id: "InstallRequest",
    example: { deployment_mode: "cloud", config: {}, granted_permissions: ["get_authenticated_user"] },
  });

export const InstallationPendingOAuth = z
  .object({
    installation_id: z.string(),
    connector_id: z.string(),
    status: z.literal("pending_oauth"),
    oauth_authorization_url: Uri.describe("The URL the user must visit (PKCE S256, single-use state)"),
    oauth_state: z.string(),
    redirect_uri: Uri,
    expires_at: Timestamp.describe("The authorization URL is valid 15 minutes; then the installation expires"),
  })
  .meta({
    id: "InstallationPendingOAuth",
    example: {
      installation_id: "ins_01m806mp6t2k9d8c7b6a5z4y3x",
      connector_id: "github",
      status: "pending_oauth",
      oauth_authorization_url:
        "https://github.com/login/oauth/authorize?response_type=code&client_id=Iv1.abc&state=Yp3…&code_challenge=…&code_challenge_method=S256",
      oauth_state: "Yp3kq0bD9tOZ4m8qvO2wV6xJd1nE5sLhRcAaFgTuWi0",
      redirect_uri: "https://svc.example.com/v1/marketplace/oauth/callback",
      expires_at: "2026-11-21T09:45:00.000Z",
    },
  });

export const InstallationActive = z
  .object({
    installation_id: z.string(),
    connector_id: z.string(),
    status: z.literal("active"),
    installed_at: Timestamp,
  })
  .meta({
    id: "InstallationActive",
    example: {
      installation_id: "ins_01m806mp6t2k9d8c7b6a5z4y3x",
      connector_id: "http-json",
      status: "active",
      installed_at: EXAMPLE.createdAt,
    },
  });

export const InstallResult = z.union([InstallationPendingOAuth, InstallationActive]).meta({
  id: "InstallResult",
  example: {
    installation_id: "ins_01m806mp6t2k9d8c7b6a5z4y3x",
    connector_id: "http-json",
    status: "active",
    installed_at: EXAMPLE.createdAt,
  },
});

const INSTALLATION_EXAMPLE = {
  installation_id: "ins_01m806mp6t2k9d8c7b6a5z4y3x",
  connector: {
    connector_id: "github",
    name: "GitHub",
    provider: "GitHub",
    icon_url: "https://github.githubassets.com/favicons/favicon.svg",
  },
  status: "active" as const,
  deployment_mode: "cloud" as const,
  config: {},
  granted_permissions: ["get_authenticated_user"],
  health_status: "healthy" as const,
  installed_by: EXAMPLE.agentDid,
  installed_at: EXAMPLE.createdAt,
  last_invocation_at: null,
  invocation_count_30d: 0,
};

export const ConnectorInstallation = z
  .object({
    installation_id: z.string(),
    connector: z.object({
      connector_id: z.string(),
      name: z.string(),
      provider: z.string(),
      icon_url: Uri.nullable(),
    }),
    status: InstallationStatus,
    deployment_mode: DeploymentMode,
    config: z.record(z.string(), z.unknown()),
    granted_permissions: z.array(z.string()),
    health_status: HealthStatus,
    installed_by: z.string().describe("DID of the installer"),
    installed_at: Timestamp,
    last_invocation_at: Timestamp.nullable(),
    invocation_count_30d: z.number().int(),
  })
  .meta({ id: "ConnectorInstallation", example: INSTALLATION_EXAMPLE });

export const InstallationListQuery = ListQuery.extend({
  status: InstallationStatus.optional().describe("Only installations in this status"),
  connector_id: z.string().max(100).optional().describe("Only installations of this connector"),
});

export const InstallationList = z.object({ data: z.array(ConnectorInstallation), pagination: PaginationInfo }).meta({
  id: "InstallationList",
  example: { data: [INSTALLATION_EXAMPLE], pagination: { has_more: false, next_cursor: null } },
});

export const InstallationUpdateRequest = z
  .object({
    config: z.record(z.string(), z.unknown()).optional().describe("Replaces the config (validated again)"),
    status: z.enum(["active", "suspended"]).optional().describe("active ⇄ suspended"),
    granted_permissions: z.array(z.string().min(1).max(100)).max(200).optional(),
    base_url: z.url().max(2000).nullable().optional().describe("null returns to the connector's own base URL"),
  })
  .strict()
  .meta({ id: "InstallationUpdateRequest", example: { status: "suspended" } });

export const InstallationUsage = z
  .object({
    installation_id: z.string(),
    connector_id: z.string(),
    period: z.literal("30d"),
    statistics: z.object({
      total_invocations: z.number().int(),
      successful_invocations: z.number().int(),
      failed_invocations: z.number().int(),
      average_duration_ms: z.number(),
      total_cost_usd: z.number(),
      last_invocation_at: Timestamp.nullable(),
    }),
    daily_breakdown: z.array(
      z.object({
        date: z.string().describe("YYYY-MM-DD (UTC)"),
        invocations: z.number().int(),
        cost_usd: z.number(),
      }),
    ),
  })
  .meta({
    id: "InstallationUsage",
    example: {
      installation_id: INSTALLATION_EXAMPLE.installation_id,
      connector_id: "github",
      period: "30d",
      statistics: {
        total_invocations: 3,
        successful_invocations: 2,
        failed_invocations: 1,
        average_duration_ms: 182.3,
        total_cost_usd: 0,
        last_invocation_at: EXAMPLE.createdAt,
      },
      daily_breakdown: [{ date: "2026-11-21", invocations: 3, cost_usd: 0 }],
    },
  });

export const ConnectorRating = z
  .object({
    rating_id: z.string(),
    rating: z.number().int().min(1).max(5),
    review_text: z.string().nullable(),
    user: z.object({ user_id: z.string(), display_name: z.string() }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({
    id: "ConnectorRating",
    example: {
      rating_id: "rat_01m806mp6t2k9d8c7b6a5z4y3x",
      rating: 5,
      review_text: "Set up in a minute.",
      user: { user_id: "mem_01m806mp6t2k9d8c7b6a5z4y3x", display_name: "Ada" },
      created_at: EXAMPLE.createdAt,
      updated_at: EXAMPLE.createdAt,
    },
  });

export const RatingRequest = z
  .object({
    rating: z.number().int().min(1).max(5),
    review_text: z.string().max(5000).nullable().optional(),
  })
  .strict()
  .meta({ id: "RatingRequest", example: { rating: 5, review_text: "Set up in a minute." } });

export const RatingList = z
  .object({ data: z.array(ConnectorRating), pagination: PaginationInfo })
  .meta({ id: "RatingList", example: { data: [], pagination: { has_more: false, next_cursor: null } } });

export const RatingSummary = z
  .object({
    average: z.number().min(0).max(5).describe("0.00 to 5.00 (0 before the first rating)"),
    count: z.number().int(),
    distribution: z.object({
      "1": z.number().int(),
      "2": z.number().int(),
      "3": z.number().int(),
      "4": z.number().int(),
      "5": z.number().int(),
    }),
  })
  .meta({
    id: "RatingSummary",
    example: { average: 4.5, count: 4, distribution: { "1": 0, "2": 0, "3": 0, "4": 2, "5": 2 } },
  });

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

/** The provider's redirect back (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export const OAuthCallbackQuery = z.object({
  state: z.string().min(1).max(500).optional(),
  code: z.string().min(1).max(4000).optional(),
  iss: z.string().max(2000).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
  error_uri: z.string().max(2000).optional(),
  scope: z.string().max(4000).optional(),
});

/** The console's form for an organization's OAuth client at a connector's provider. */
export const ConnectorClientRequest = z
  .object({
    connector_id: z.string().min(1).max(100),
    client_id: z.string().min(1).max(500),
    client_secret: z.string().min(1).max(500).optional().describe("Kept sealed; never shown again"),
  })
  .strict();

export const ConnectorClientView = z.object({
  connector_id: z.string(),
  client_id: z.string().nullable(),
  has_client_secret: z.boolean(),
  source: z.enum(["console", "environment", "definition", "none"]),
  updated_at: Timestamp.nullable(),
});

/** The callback answers with a redirect (303, `Location`), no body. */
export const OAuthCallbackRedirect = z.null().describe("No body: see the Location header");

/** Console: where an installation stands, pending and expired authorizations included. */
export const InstallationStateView = z.object({
  installation_id: z.string(),
  connector_id: z.string(),
  status: InstallationRowStatus,
  detail: z.string().nullable().describe("Why an authorization failed or a refresh broke (never a token)"),
  expires_at: Timestamp.nullable().describe("pending_oauth: when the authorization link stops working"),
  installed_at: Timestamp.nullable(),
});
