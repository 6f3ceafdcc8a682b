import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { DeploymentMode, HealthStatus, Timestamp, Uri } from "./connectorSchemas";

// Pure zod: an installation, its usage and its state.

/** What the API shows of an installation; `pending_oauth` and `expired` exist only before activation. */
export const InstallationStatus = z.enum(["active", "suspended", "uninstalled"]);

/** Every state an installation row can be in (server side). */
export const InstallationRowStatus = z.enum(["pending_oauth", "active", "suspended", "uninstalled", "expired"]);

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

/** Console: where an installation stands, pending and expired authorizations included. */
export const InstallationStateView = z.object({
  installation_id: z.string(),
  connector_id: z.string(),
  status: InstallationRowStatus,
  detail: z.string().nullable().describe("Why an authorization failed or a refresh broke (never a token)"),
  expires_at: Timestamp.nullable().describe("pending_oauth: when the authorization link stops working"),
  installed_at: Timestamp.nullable(),
});
