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
    // The window is the clock's minute: this process's Date is held just past the start of the next
    // minute, so all the calls fall in one window whatever the real clock says (waiting for a new
    // minute cost up to 15 s). Timers and the database's clock run on.
    vi.useFakeTimers({ toFake: ["Date"], now: Math.ceil(Date.now() / 60_000) * 60_000 + 100 });
    const statuses: number[] = [];
    try {
      for (let i = 0; i < LIMIT + 2; i++) statuses.push(await (i % 2 === 0 ? viaFast() : viaNext()));
    } finally {
      vi.useRealTimers();
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses.slice(LIMIT)).toEqual([429, 429]);
  });
});
