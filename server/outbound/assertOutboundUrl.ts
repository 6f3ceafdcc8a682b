import { ValidationFailed } from "../errors";
import { isIP } from "node:net";
import { isAllowListed, literalRefusal, normalHost } from "./allowList";

/**
 * Validation of a URL svc will call later (a callback_url, a webhook target), at the time it is
 * given: syntax, scheme, no credentials, https where required, and no literal address the guard
 * would refuse. A 400 naming `field` now is kinder than a failed delivery later; names are still
 * checked on every connection (DNS can change), by outboundRequest.
 */
export function assertOutboundUrl(raw: string, options: { requireHttps?: boolean; field?: string } = {}): URL {
  const field = options.field ?? "url";
  const received = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  const refuse = (code: string, message: string, shown = received) =>
    ValidationFailed([{ field, code, message, received: shown }]);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("INVALID_FORMAT", "Give an absolute http or https URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw refuse("INVALID_FORMAT", `Only http and https URLs are accepted, not ${url.protocol}.`);
  if (url.username || url.password) {
    // The credentials are not echoed back.
    throw refuse(
      "INVALID_FORMAT",
      "The URL must not carry a user name or password; authenticate the receiver with the signature instead.",
      `${url.protocol}//***@${url.host}`,
    );
  }
  if (options.requireHttps && url.protocol === "http:" && !isAllowListed(url)) {
    throw refuse(
      "INVALID_VALUE",
      `The URL must use https (plain http is accepted only for hosts in SVC_OUTBOUND_ALLOW).${howToAllow(url)}`,
    );
  }
  const refusal = literalRefusal(url);
  if (refusal) throw refuse("INVALID_VALUE", `svc does not call this address: ${refusal}.${howToAllow(url)}`);
  return url;
}

/**
 * The exact SVC_OUTBOUND_ALLOW entry that would open this URL (its host and port), for the
 * operator of a local receiver: the allow list takes IP literals and localhost, and is read at
 * start. Empty for a name, which only a CIDR of its addresses can open.
 */
function howToAllow(url: URL): string {
  const host = normalHost(url.hostname);
  if (host !== "localhost" && !isIP(host))
    return " SVC_OUTBOUND_ALLOW takes IP addresses (host:port or a CIDR) and localhost, not names.";
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const entry = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return ` To let svc call a receiver there (a local test receiver), restart the server with SVC_OUTBOUND_ALLOW=${entry} (comma-separated with any entries already set).`;
}
