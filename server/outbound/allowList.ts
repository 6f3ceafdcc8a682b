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
  for (const item of raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (item.includes("/")) {
      if (!ipaddr.isValidCIDR(item)) throw new Error(`SVC_OUTBOUND_ALLOW: ${JSON.stringify(item)} is not a valid CIDR`);
      const range = ipaddr.parseCIDR(item);
      const text = `${range[0].toString()}/${range[1]}`;
      allow.cidrs.push({ text, family: range[0].kind() === "ipv4" ? 4 : 6, range });
      continue;
    }
    const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(item);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535)
      throw new Error(`SVC_OUTBOUND_ALLOW: ${JSON.stringify(item)} is neither a CIDR nor host:port`);
    const host = normalHost(m[1]!);
    const ips = host === "localhost" ? LOCALHOST_IPS : isIP(host) ? [host] : undefined;
    if (!ips)
      throw new Error(
        `SVC_OUTBOUND_ALLOW: a host:port entry takes an IP address or localhost, got ${JSON.stringify(m[1])}`,
      );
    allow.hostPorts.push({ host, port, ips });
  }
  return allow;
}

const parsed = processWide("outbound.allowList", () => ({
  current: undefined as { raw: string; allow: OutboundAllow } | undefined,
}));

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

/** IANA's global unicast block: every public IPv6 address lies in it. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * The IPv4 address an IPv6 form carries, where it carries one: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-compatible (`::a.b.c.d`, also written `[::7f00:1]`), NAT64 (`64:ff9b::/96`,
 * `64:ff9b:1::/48`), 6to4 (`2002:AABB:CCDD::`) and Teredo (the client's, inverted).
 */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (a.isIPv4MappedAddress()) return a.toIPv4Address();
  const range = a.range();
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  if (range === "rfc6052" || range === "rfc6145") return v4(p[6]!, p[7]!);
  if (range === "6to4") return v4(p[1]!, p[2]!);
  if (range === "teredo") return v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff);
  return undefined;
}

/**
 * Why svc will not connect to an IP address, or undefined when it is public. Classified by
 * ipaddr.js's ranges, whatever the spelling: an IPv4 address must be `unicast` (not private,
 * loopback, link-local, carrier-grade NAT, reserved, …); an IPv6 address must be `unicast` and
 * inside global unicast (2000::/3), so every form that carries an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo) is refused, naming the address it carries.
 */
export function addressRefusal(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return `${ip} is not an IP address`;
  const address = ipaddr.parse(ip);
  if (address.kind() === "ipv4") {
    const range = address.range();
    return range === "unicast" ? undefined : `${address.toString()} is a ${range} address, not a public one`;
  }
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  const carried = embeddedIPv4(v6);
  if (carried)
    return `${v6.toString()} is an IPv6 form (${range === "unicast" ? "IPv4-compatible" : range}) of ${carried.toString()} (a ${carried.range()} address), not a public IPv6 address`;
  if (range !== "unicast") return `${v6.toString()} is a ${range} address, not a public one`;
  if (!v6.match(GLOBAL_UNICAST_V6))
    return `${v6.toString()} is outside global unicast (2000::/3), not a public address`;
  return undefined;
}

/** Whether a connected address is one the allow list opens (an entry of `agentAllowList`: an IP or a CIDR). */
export function addressAllowed(ip: string, entries: readonly string[]): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.parse(ip);
  return entries.some((entry) => {
    if (!entry.includes("/"))
      return (
        ipaddr.isValid(entry) &&
        ipaddr.parse(entry).toString() === address.toString() &&
        ipaddr.parse(entry).kind() === address.kind()
      );
    const range = ipaddr.parseCIDR(entry);
    return range[0].kind() === address.kind() && address.match(range);
  });
}

/**
 * Why an IP literal or `localhost` in the URL is refused, or undefined. Names other than
 * localhost are judged at connect time, after DNS, on the addresses the socket would connect to
 * (outboundRequest's agent applies `addressRefusal` there too).
 */
export function literalRefusal(url: URL, allow: OutboundAllow = outboundAllow()): string | undefined {
  const host = normalHost(url.hostname);
  if (isAllowListed(url, allow)) return undefined;
  if (host === "localhost" || host.endsWith(".localhost"))
    return `${host} is the local machine and is not in SVC_OUTBOUND_ALLOW`;
  if (!isIP(host)) return undefined;
  const refusal = addressRefusal(host);
  return refusal ? `${refusal}, and is not in SVC_OUTBOUND_ALLOW` : undefined;
}
