import { describe, expect, it } from "vitest";
import { parseTrustedProxies, resolveClientAddress } from "./trustedProxies";

const resolve = (peer: string, setting: string, xff?: string, forwarded?: string) =>
  resolveClientAddress(peer, { xForwardedFor: xff, forwarded }, parseTrustedProxies(setting));

describe("SVC_TRUSTED_PROXIES (issue 26, item 15)", () => {
  it("unset: the socket's peer, whatever the headers say", () => {
    expect(resolve("127.0.0.1", "", "203.0.113.7")).toBe("127.0.0.1");
    expect(resolve("::ffff:10.0.0.5", "", "203.0.113.7")).toBe("10.0.0.5");
  });

  it("addresses: X-Forwarded-For is read only from a trusted peer, up to the first untrusted hop", () => {
    expect(resolve("127.0.0.1", "loopback", "203.0.113.7")).toBe("203.0.113.7");
    expect(resolve("::ffff:127.0.0.1", "loopback", "203.0.113.7")).toBe("203.0.113.7");
    expect(resolve("::1", "loopback", "2001:db8:0:0::7")).toBe("2001:db8::7");
    // A client's own X-Forwarded-For entry (left of the one nginx appended) is not believed.
    expect(resolve("10.0.0.5", "10.0.0.0/8", "198.51.100.1, 203.0.113.7")).toBe("203.0.113.7");
    expect(resolve("10.0.0.5", "10.0.0.5", "203.0.113.7, 10.0.0.9")).toBe("10.0.0.9");
    expect(resolve("10.0.0.5", "10.0.0.0/8", "203.0.113.7, 10.0.0.9")).toBe("203.0.113.7");
    // A peer that is not trusted: its headers are the client's own words.
    expect(resolve("198.51.100.20", "loopback", "203.0.113.7")).toBe("198.51.100.20");
    // Every hop trusted: the leftmost.
    expect(resolve("127.0.0.1", "loopback,10.0.0.0/8", "10.1.1.1, 127.0.0.2")).toBe("10.1.1.1");
  });

  it("a hop count believes that many proxies", () => {
    expect(resolve("10.0.0.5", "1", "198.51.100.1, 203.0.113.7")).toBe("203.0.113.7");
    expect(resolve("10.0.0.5", "2", "198.51.100.1, 203.0.113.7")).toBe("198.51.100.1");
    expect(resolve("10.0.0.5", "3", "198.51.100.1, 203.0.113.7")).toBe("198.51.100.1");
    expect(resolve("10.0.0.5", "1")).toBe("10.0.0.5");
    expect(resolve("10.0.0.5", "0", "203.0.113.7")).toBe("10.0.0.5");
  });

  it("reads Forwarded (RFC 7239) when there is no X-Forwarded-For", () => {
    expect(resolve("127.0.0.1", "loopback", undefined, "for=192.0.2.60;proto=http;by=203.0.113.43")).toBe("192.0.2.60");
    expect(resolve("127.0.0.1", "loopback", undefined, 'for="[2001:db8:cafe::17]:4711"')).toBe("2001:db8:cafe::17");
    expect(resolve("127.0.0.1", "loopback", undefined, "for=198.51.100.1, for=192.0.2.60:8080")).toBe("192.0.2.60");
    // X-Forwarded-For wins: what nginx and most proxies append to.
    expect(resolve("127.0.0.1", "loopback", "203.0.113.7", "for=192.0.2.60")).toBe("203.0.113.7");
  });

  it("a hop that is no address ends the walk at the proxy that reported it", () => {
    expect(resolve("127.0.0.1", "loopback", "unknown")).toBe("127.0.0.1");
    expect(resolve("127.0.0.1", "loopback", undefined, "for=_hidden")).toBe("127.0.0.1");
    expect(resolve("127.0.0.1", "1", "not an address")).toBe("127.0.0.1");
  });

  it("refuses a setting it cannot read, naming it", () => {
    expect(() => parseTrustedProxies("loopbak")).toThrow(/SVC_TRUSTED_PROXIES.*loopbak/);
    expect(() => parseTrustedProxies("10.0.0.0/99")).toThrow(/SVC_TRUSTED_PROXIES/);
    expect(() => parseTrustedProxies("99")).toThrow(/SVC_TRUSTED_PROXIES/);
    expect(parseTrustedProxies(" ")).toEqual({ kind: "none" });
  });
});
