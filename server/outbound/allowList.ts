import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { config } from "../config";
import { processWide } from "../processWide";

/**
 * SVC_OUTBOUND_ALLOW: the destinations the outbound guard lets through although they are
 * loopback, private, link-local or otherwise not public. Comma-separated entries:
 * - `host:port`: that port of that host only. The host is an IP literal (`127.0.0.1`, `[::1]`) or
 *   `localhost` (127.0.0.1 and ::1). Only URLs naming that host and port benefit, so a redirect
 *   to another port of the same machine stays refused.
 * - a CIDR (`10.20.0.0/16`, `fd00::/8`): any host and port whose connected address is inside it.
 * Empty (the default): only public unicast addresses are reachable.
 */
export interface OutboundAllow {
  cidrs: { text: string; family: 4 | 6; range: [ipaddr.IPv4 | ipaddr.IPv6, number] }[];
  hostPorts: { host: string; port: number; ips: string[] }[];
}

const LOCALHOST_IPS = ["127.0.0.1", "::1"];

/** Parses SVC_OUTBOUND_ALLOW; a malformed entry throws, naming it, so a typo cannot silently open or close a hole. */
export function parseOutboundAllow(raw: string): OutboundAllow {
  const allow: OutboundAllow = { cidrs: [], hostPorts: [] };
  for (const item of raw.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (item.includes("/")) {
      if (!ipaddr.isValidCIDR(item)) throw new Error(`SVC_OUTBOUND_ALLOW: ${JSON.stringify(item)} is not a valid CIDR`);
      const range = ipaddr.parseCIDR(item);
      const text = `${range[0].toString()}/${range[1]}`;
      allow.cidrs.push({ text, family: range[0].kind() === "ipv4" ? 4 : 6, range });
      continue;
    }
    const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(item);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) throw new Error(`SVC_OUTBOUND_ALLOW: ${JSON.stringify(item)} is neither a CIDR nor host:port`);
    const host = normalHost(m[1]!);
    const ips = host === "localhost" ? LOCALHOST_IPS : isIP(host) ? [host] : undefined;
    if (!ips) throw new Error(`SVC_OUTBOUND_ALLOW: a host:port entry takes an IP address or localhost, got ${JSON.stringify(m[1])}`);
    allow.hostPorts.push({ host, port, ips });
  }
  return allow;
}

const parsed = processWide("outbound.allowList", () => ({ current: undefined as { raw: string; allow: OutboundAllow } | undefined }));

/** The allow list in force, read from the configuration on each call (tests change it with resetConfig). */
export function outboundAllow(): OutboundAllow {
  const raw = config().outboundAllow;
  if (parsed.current?.raw !== raw) parsed.current = { raw, allow: parseOutboundAllow(raw) };
  return parsed.current.allow;
}

/** A URL hostname as the allow list spells it: IPv6 without brackets and compressed, names lower-case without a trailing dot. */
export function normalHost(hostname: string): string {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare)) return ipaddr.parse(bare).toString();
  return bare.toLowerCase().replace(/\.$/, "");
}

export function defaultPort(url: URL): number {
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
}

function inCidrs(allow: OutboundAllow, ip: string): boolean {
  const address = ipaddr.parse(ip);
  return allow.cidrs.some((c) => c.range[0].kind() === address.kind() && address.match(c.range));
}

/** Whether the URL names a destination the allow list opens (a listed host:port, or an IP literal or localhost inside a CIDR). */
export function isAllowListed(url: URL, allow: OutboundAllow = outboundAllow()): boolean {
  const host = normalHost(url.hostname);
  const port = defaultPort(url);
  if (allow.hostPorts.some((e) => e.host === host && e.port === port)) return true;
  if (isIP(host)) return inCidrs(allow, host);
  return host === "localhost" && LOCALHOST_IPS.some((ip) => inCidrs(allow, ip));
}

/**
 * The addresses the filtering agent may connect to for this URL although they are not public.
 * For an IP literal only CIDRs of its family are passed: the agent warns on every comparison
 * across families.
 */
export function agentAllowList(url: URL, allow: OutboundAllow = outboundAllow()): string[] {
  const host = normalHost(url.hostname);
  const port = defaultPort(url);
  const family = isIP(host);
  const cidrs = allow.cidrs.filter((c) => family === 0 || c.family === family).map((c) => c.text);
  const entry = allow.hostPorts.find((e) => e.host === host && e.port === port);
  return [...cidrs, ...(entry ? entry.ips : [])];
}

/**
 * Why an IP literal or `localhost` in the URL is refused, or undefined. Names other than
 * localhost are judged by the agent after DNS, on the addresses the socket would connect to.
 */
export function literalRefusal(url: URL, allow: OutboundAllow = outboundAllow()): string | undefined {
  const host = normalHost(url.hostname);
  if (isAllowListed(url, allow)) return undefined;
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} is the local machine and is not in SVC_OUTBOUND_ALLOW`;
  if (!isIP(host)) return undefined;
  const range = ipaddr.parse(host).range();
  if (range === "unicast") return undefined;
  return `${host} is a ${range} address, not a public one, and is not in SVC_OUTBOUND_ALLOW`;
}
