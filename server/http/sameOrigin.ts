import { config } from "../config";

/**
 * The console's CSRF defence beside its SameSite=Lax session cookie: a state-changing request
 * (anything but GET, HEAD, OPTIONS) to a console endpoint must come from the console's own origin.
 * A browser names the page that sent it in `Origin` (or, in older browsers and some redirects, only
 * in `Referer`); the origin is svc's own when its host is SVC_PUBLIC_URL's or the request's own
 * (`Host`). A request naming neither is not from a page (a script, a server-side caller) and is
 * let through: what stops a page then is the session cookie it cannot send cross-site.
 * Undefined when the request may go on; otherwise why it may not.
 */
export function crossSiteRefusal(request: Request): string | undefined {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return undefined;
  if (request.headers.get("sec-fetch-site") === "cross-site")
    return "Cross-site requests to the console API are refused.";
  const origin = request.headers.get("origin");
  const referer = origin === null ? request.headers.get("referer") : null;
  const sender = origin ?? referer;
  if (sender === null) return undefined;
  const host = hostOf(sender);
  if (host !== undefined && ownHosts(request).has(host)) return undefined;
  const named = origin !== null ? `Origin ${JSON.stringify(origin)}` : "Referer's origin";
  return `Cross-site requests to the console API are refused: the ${named} is not this console's (${config().publicUrl}).`;
}

function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.host.toLowerCase() : undefined;
  } catch {
    // `Origin: null` (a sandboxed frame, a redirect across origins) and anything unparsable.
    return undefined;
  }
}

function ownHosts(request: Request): Set<string> {
  const hosts = new Set<string>();
  const add = (value: string | null | undefined) => {
    if (value) hosts.add(value.toLowerCase());
  };
  add(hostOf(config().publicUrl));
  add(request.headers.get("host"));
  add(hostOf(request.url));
  return hosts;
}
