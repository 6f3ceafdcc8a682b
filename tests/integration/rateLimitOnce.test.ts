import { describe, expect, it, vi } from "vitest";
import { resetConfig } from "@/server/config";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { useTestServer } from "./harness";

/**
 * Issue 14.14: the /v1 fast path (svc's node:http server) and Next.js's catch-all route each run
 * their own copy of the server modules; the process keeps one rate-limit window per caller and
 * operation, so a caller using both transports gets the limit once, not once per transport.
 */
const LIMIT = 6;
process.env.SVC_RATE_LIMIT_PER_MINUTE = String(LIMIT);
resetConfig();

const t = useTestServer();

describe("rate limits count once per process", () => {
  it("a caller alternating between the fast path and Next.js's copy is refused after the limit, not twice the limit", async () => {
    // Next.js's bundle: a second copy of every server module.
    vi.resetModules();
    const nextRoute = (await import("@/app/v1/[[...path]]/route")) as unknown as Record<
      string,
      (r: Request) => Promise<Response>
    >;
    const viaFast = async () =>
      (await fetch(`${t.server.url}/v1/passports?limit=1`, { headers: { Authorization: `Bearer ${t.root.token}` } }))
        .status;
    const viaNext = async () =>
      (
        await nextRoute.GET!(
          new Request("http://localhost:3000/v1/passports?limit=1", {
            headers: { Authorization: `Bearer ${t.root.token}`, [CLIENT_ADDRESS_HEADER]: "127.0.0.1" },
          }),
        )
      ).status;
    // The window is the clock's minute: start early in one, so all the calls fall in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) statuses.push(await (i % 2 === 0 ? viaFast() : viaNext()));
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses.slice(LIMIT)).toEqual([429, 429]);
  });
});
