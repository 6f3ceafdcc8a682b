import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as authenticateOptions } from "@/app/api/passkeys/authenticate/options/route";
import { resetConfig } from "@/server/config";
import { CLIENT_ADDRESS_HEADER, clientAddressOf } from "@/server/http/clientAddress";
import { useTestServer } from "./harness";

/**
 * Issue 26, item 15: behind a proxy every client reached svc from the proxy's address and shared
 * one anonymous rate-limit bucket. With SVC_TRUSTED_PROXIES the client is read from the trusted
 * proxy's X-Forwarded-For / Forwarded; without it (or from a peer it does not name), the socket's.
 * The clock is pinned inside a minute: the windows are per minute.
 */
const t = useTestServer();
const LIMIT = 3;

function configure(trusted: string | undefined) {
  if (trusted === undefined) delete process.env.SVC_TRUSTED_PROXIES;
  else process.env.SVC_TRUSTED_PROXIES = trusted;
  resetConfig();
}

let minute = 0;
/** A fresh minute for each test, 30 s in: every call of the test counts in the same window. */
function freshWindow() {
  vi.setSystemTime(Date.UTC(2031, 0, 1, 0, ++minute, 30));
}

beforeAll(() => {
  process.env.SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE = String(LIMIT);
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => configure(undefined));
afterAll(() => {
  vi.useRealTimers();
  delete process.env.SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE;
  resetConfig();
});

/** An anonymous /v1 call through svc's own HTTP server (loopback peer), as nginx forwards it. */
const anonymous = (forwardedFor: string) =>
  fetch(`${t.server.url}/v1/passports`, { headers: { "X-Forwarded-For": forwardedFor } }).then((r) => r.status);

/** The passkey sign-in ceremony's first call, with the address svc's server resolves for it (server/main.ts). */
const signInOptions = (forwardedFor: string) =>
  authenticateOptions(
    new Request("http://localhost/api/passkeys/authenticate/options", {
      method: "POST",
      headers: {
        [CLIENT_ADDRESS_HEADER]: clientAddressOf({
          socket: { remoteAddress: "127.0.0.1" } as never,
          headers: { "x-forwarded-for": forwardedFor },
        }),
      },
    }),
  ).then((r) => r.status);

describe("the client's address behind a proxy (issue 26, item 15)", () => {
  it("without SVC_TRUSTED_PROXIES, clients behind one proxy share its bucket", async () => {
    configure(undefined);
    freshWindow();
    for (let i = 0; i < LIMIT; i++) expect(await anonymous("203.0.113.1")).toBe(401);
    expect(await anonymous("203.0.113.1")).toBe(429);
    expect(await anonymous("198.51.100.1")).toBe(429);
  });

  it("with the proxy trusted, each client has its own bucket (/v1)", async () => {
    configure("loopback");
    freshWindow();
    for (let i = 0; i < LIMIT; i++) expect(await anonymous("203.0.113.2")).toBe(401);
    expect(await anonymous("203.0.113.2")).toBe(429);
    expect(await anonymous("198.51.100.2")).toBe(401);
    // A client cannot pick a fresh bucket by sending its own X-Forwarded-For: nginx appends the real one.
    expect(await anonymous("192.0.2.99, 203.0.113.2")).toBe(429);
  });

  it("with the proxy trusted, one client's sign-in attempts do not lock the others out", async () => {
    configure("127.0.0.1");
    freshWindow();
    for (let i = 0; i < LIMIT; i++) expect(await signInOptions("203.0.113.3")).toBe(200);
    expect(await signInOptions("203.0.113.3")).toBe(429);
    expect(await signInOptions("198.51.100.3")).toBe(200);
  });

  it("a proxy the setting does not name is not believed", async () => {
    configure("10.0.0.0/8");
    freshWindow();
    for (let i = 0; i < LIMIT; i++) expect(await anonymous(`203.0.113.${10 + i}`)).toBe(401);
    expect(await anonymous("198.51.100.4")).toBe(429);
  });

  it("a hop count reads that many hops", async () => {
    configure("1");
    freshWindow();
    for (let i = 0; i < LIMIT; i++) expect(await anonymous("203.0.113.5")).toBe(401);
    expect(await anonymous("203.0.113.5")).toBe(429);
    expect(await anonymous("198.51.100.5")).toBe(401);
  });
});
