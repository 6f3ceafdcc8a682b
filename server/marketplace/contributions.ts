import type { Contributions } from "../contributions";
import type { ErrorEntry } from "../errorCatalogue";
import { capability } from "../identity/capabilityCatalogue";

/** Its own problem types (/docs/errors lists them after the shared ones). */
const errors = {
  connector_not_configured: {
    status: 409,
    title: "Connector not configured",
    description:
      "The connector needs OAuth and no OAuth client (client id and secret at its provider) is set for it: neither in the console for your organization, nor in SVC_CONNECTOR_<ID>_CLIENT_ID / _CLIENT_SECRET, nor in its definition.",
    fix: "An administrator sets the connector's OAuth client in the console (Marketplace → the connector → OAuth client), or the operator sets the environment variables.",
  },
  connector_connection_expired: {
    status: 409,
    title: "Connector connection expired",
    description:
      "The installation's access token expired and could not be refreshed (the provider refused the refresh token, or gave none). The installation's health is down; `connector.connection_expired` was put on the event bus when the worker's refresh failed.",
    fix: "Uninstall it and install the connector again (a new consent at the provider).",
  },
  oauth_state_invalid: {
    status: 400,
    title: "OAuth state invalid",
    description:
      "The OAuth callback's `state` is missing, unknown, already used, or older than 15 minutes (the pending installation then expired). Each authorization link works once.",
    fix: "Start the installation again to get a new authorization link.",
  },
  oauth_callback_failed: {
    status: 400,
    title: "OAuth authorization failed",
    description:
      "The provider's answer to the authorization could not complete the installation: it reported an error (say access_denied), its `iss` is not the provider's issuer (RFC 9207, a mix-up attack), the code was missing, or the code exchange failed (a wrong redirect_uri or PKCE verifier, an expired code). `reason` says which; the installation is marked expired.",
    fix: "Start the installation again; if it fails the same way, check the connector's OAuth client and redirect URI at the provider.",
  },
  installation_not_active: {
    status: 409,
    title: "Installation not active",
    description:
      "A connector invocation needs an active installation; this one is suspended, waiting for its OAuth consent, expired or uninstalled. The problem names its `current_state`.",
    fix: "Resume a suspended installation (PATCH status active), finish or restart the install, or install the connector again.",
  },
  action_not_granted: {
    status: 403,
    title: "Action not granted",
    description:
      "The connector action is not among the installation's `granted_permissions`, so it may not be invoked through this installation.",
    fix: "Add the action to the installation's granted_permissions (PATCH /v1/marketplace/installations/{id}), or use another installation.",
  },
  rating_requires_usage: {
    status: 403,
    title: "Rating needs usage",
    description:
      "Only organizations with at least one successful invocation of a connector may rate it, so ratings come from real users.",
    fix: "Install the connector and invoke one of its actions successfully, then rate it.",
  },
} as const satisfies Record<string, ErrorEntry>;

declare module "../errorCatalogue" {
  // Its codes, typed for `domainError` (see AreaErrorCodes).
  interface AreaErrorCodes extends Record<keyof typeof errors, true> {}
}

/** The marketplace's part of the catalogues. */
export const marketplaceContributions = {
  capabilities: {
    areas: { marketplace: "Marketplace" },
    capabilities: [
      capability("marketplace", "read", "Browse connectors, installations and ratings."),
      capability("marketplace", "install", "Install, update and uninstall connectors."),
      capability("marketplace", "rate", "Rate connectors."),
      capability("marketplace", "invoke", "Invoke installed connectors."),
    ],
  },
  platformEvents: [
    {
      pattern: "connector.*",
      readCapability: "svc_api:marketplace:read",
      description: "the marketplace: installed, connection_expired",
      types: ["connector.installed", "connector.connection_expired"],
    },
  ],
  nav: [{ href: "/marketplace", label: "Marketplace", section: "Connect", icon: "Store" }],
  errors,
} satisfies Contributions;
