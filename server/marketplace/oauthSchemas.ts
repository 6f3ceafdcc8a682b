import { z } from "zod";
import { Timestamp } from "./connectorSchemas";

// Pure zod: the OAuth callback and the organization's OAuth client.

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
