import ipaddr from "ipaddr.js";

/**
 * SVC_TRUSTED_PROXIES, parsed: whose `X-Forwarded-For` / `Forwarded` svc believes. Unset (or `0`):
 * nobody's, the client is the socket's peer. A hop count (`1`): that many proxies in front of svc,
 * each appending the address it saw; only right when svc cannot be reached but through them.
 * Addresses and CIDRs (`10.0.0.5,192.168.0.0/16`), or `loopback`, `linklocal`, `uniquelocal`:
 * a hop is believed when the address that handed the request on is one of them.
 */
export type TrustedProxies =
  | { kind: "none" }
  | { kind: "hops"; hops: number }
  | { kind: "addresses"; ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> };

const NAMED: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

export function parseTrustedProxies(raw: string | undefined): TrustedProxies {
  const value = (raw ?? "").trim();
  if (value === "" || value === "0") return { kind: "none" };
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 32) throw new Error(`SVC_TRUSTED_PROXIES: a hop count is at most 32, got ${value}`);
    return { kind: "hops", hops };
  }
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const item of value.split(",").map((v) => v.trim().toLowerCase())) {
    if (item === "") continue;
    for (const cidr of NAMED[item] ?? [item]) {
      try {
        ranges.push(
          cidr.includes("/")
            ? ipaddr.parseCIDR(cidr)
            : [ipaddr.process(cidr), ipaddr.process(cidr).kind() === "ipv4" ? 32 : 128],
        );
      } catch {
        throw new Error(
          `SVC_TRUSTED_PROXIES: ${JSON.stringify(item)} is neither an IP address, a CIDR, loopback, linklocal, uniquelocal nor a hop count`,
        );
      }
    }
  }
  return ranges.length === 0 ? { kind: "none" } : { kind: "addresses", ranges };
}

/** An address as a rate-limit key: IPv4-mapped IPv6 as IPv4, IPv6 compacted; undefined when not an address. */
export function normalizeAddress(raw: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (raw === undefined) return undefined;
  let text = raw.trim().replace(/^"|"$/g, "");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"));
  // A zone (fe80::1%eth0) names an interface of the proxy's, not the client.
  text = text.replace(/%.*$/, "");
  return ipaddr.isValid(text) ? ipaddr.process(text) : undefined;
}

/** The `for=` values of a `Forwarded` header (RFC 7239), nearest last. */
export function forwardedFor(header: string): string[] {
  const out: string[] = [];
  for (const element of header.split(",")) {
    const pair = element
      .split(";")
      .map((p) => p.trim())
      .find((p) => p.toLowerCase().startsWith("for="));
    // An element without `for=` still stands for a hop: keep its place with a value that is no address.
    out.push(pair ? pair.slice(4) : "unknown");
  }
  return out;
}

const MAX_HOPS_READ = 64;

/**
 * The client of a request that reached svc from `peer` (the socket's address) carrying the
 * forwarding headers it carries: walking from the peer towards the client, every believed hop
 * hands on to the address before it; the first one not believed is the client. A hop whose
 * predecessor is no address (`unknown`, an obfuscated name) ends the walk at that hop: the client
 * cannot be told apart, and the proxy's address is the best key there is.
 */
export function resolveClientAddress(
  peer: string | undefined,
  headers: { xForwardedFor: string | null | undefined; forwarded: string | null | undefined },
  trusted: TrustedProxies,
): string {
  const direct = peer === undefined ? undefined : peerAddress(peer);
  if (!direct) return peer || "unknown";
  if (trusted.kind === "none") return direct.text;
  return walkForwarded(peer!, direct.address, headers, trusted);
}

// Socket peers as parsed: a server sees few distinct ones at a time (keep-alive clients, its
// proxies), and parsing one cost more than the rest of resolving a request's client (issue 30).
// not state: a memo of a pure function (any copy of the module answers alike).
const peers = new Map<string, { address: ipaddr.IPv4 | ipaddr.IPv6; text: string } | null>();
const MAX_PEERS = 4096;

function peerAddress(peer: string): { address: ipaddr.IPv4 | ipaddr.IPv6; text: string } | null {
  let known = peers.get(peer);
  if (known === undefined) {
    const address = normalizeAddress(peer);
    known = address ? { address, text: address.toString() } : null;
    if (peers.size >= MAX_PEERS) peers.clear();
    peers.set(peer, known);
  }
  return known;
}

function walkForwarded(
  peer: string,
  direct: ipaddr.IPv4 | ipaddr.IPv6,
  headers: { xForwardedFor: string | null | undefined; forwarded: string | null | undefined },
  trusted: Exclude<TrustedProxies, { kind: "none" }>,
): string {
  const listed = headers.xForwardedFor
    ? headers.xForwardedFor.split(",")
    : headers.forwarded
      ? forwardedFor(headers.forwarded)
      : [];
  const chain = [...listed.slice(-MAX_HOPS_READ), peer];
  let current = direct;
  for (let i = chain.length - 1, hop = 0; i > 0; i--, hop++) {
    const believed =
      trusted.kind === "hops"
        ? hop < trusted.hops
        : trusted.ranges.some(([range, bits]) => current.kind() === range.kind() && current.match(range, bits));
    if (!believed) break;
    const before = normalizeAddress(chain[i - 1]);
    if (!before) break;
    current = before;
  }
  return current.toString();
}
