import { config } from "../config";

/** The one redirect URI svc registers at providers: its own callback route. */
export const oauthCallbackUrl = () => `${config().publicUrl}/v1/marketplace/oauth/callback`;

/** Where the browser lands after the callback: the console's page of the installation. */
export function consoleInstallationUrl(
  installationId: string,
  outcome: { oauth: "connected" } | { oauth: "failed"; reason: string },
) {
  const url = new URL(`${config().publicUrl}/marketplace/installations/${encodeURIComponent(installationId)}`);
  url.searchParams.set("oauth", outcome.oauth);
  if (outcome.oauth === "failed") url.searchParams.set("reason", outcome.reason);
  return url.toString();
}
