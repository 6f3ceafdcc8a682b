import { describe, expect, it } from "vitest";
import { POST as authRoute } from "@/app/api/auth/[...nextauth]/route";
import { POST as authenticateOptions } from "@/app/api/passkeys/authenticate/options/route";
import { POST as registerOptions } from "@/app/api/passkeys/register/options/route";
import { POST as registerVerify } from "@/app/api/passkeys/register/verify/route";
import { PRE_AUTH_BODY_LIMIT } from "@/server/http/body";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { lastProvenance } from "./harness";

/**
 * The routes anyone may call before signing in read at most PRE_AUTH_BODY_LIMIT bytes of a body
 * (issue 7.3): a declared Content-Length over it is refused unread, a streamed one is cut off.
 */
const FIVE_MB = 5 * 1024 * 1024;
const CHUNK = 64 * 1024;

/** A 5 MB body that counts how much of it the server pulled. */
function bigBody() {
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (counter.pulled >= FIVE_MB) return controller.close();
        counter.pulled += CHUNK;
        controller.enqueue(new Uint8Array(CHUNK).fill(0x61));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

function request(path: string, declareLength: boolean, address: string) {
  const { stream, counter } = bigBody();
  const headers: Record<string, string> = { "Content-Type": "application/json", [CLIENT_ADDRESS_HEADER]: address };
  if (declareLength) headers["Content-Length"] = String(FIVE_MB);
  return {
    request: new Request(`http://localhost${path}`, {
      method: "POST",
      headers,
      body: stream,
      duplex: "half",
    } as RequestInit),
    counter,
  };
}

const routes: [string, (r: Request) => Promise<Response>][] = [
  ["/api/passkeys/register/options", registerOptions],
  ["/api/passkeys/register/verify", registerVerify],
  ["/api/passkeys/authenticate/options", authenticateOptions],
  [
    "/api/auth/callback/passkey",
    (r) => authRoute(r as never, { params: Promise.resolve({ nextauth: ["callback", "passkey"] }) }),
  ],
];

describe("pre-auth bodies are bounded", () => {
  it("the limit is small and documented", () => {
    expect(PRE_AUTH_BODY_LIMIT).toBe(64 * 1024);
  });

  for (const [path, handler] of routes) {
    it(`${path}: 413 for a declared 5 MB body without reading it, recorded as denied`, async () => {
      const { request: req, counter } = request(path, true, `10.0.0.${routes.findIndex((r) => r[0] === path) + 1}`);
      const res = await handler(req);
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect((await res.json()).status).toBe(413);
      expect(counter.pulled).toBe(0);
      expect(await lastProvenance()).toMatchObject({ status: 413, decision: "denied" });
    });

    it(`${path}: 413 for a streamed 5 MB body, reading no more than the limit`, async () => {
      const { request: req, counter } = request(path, false, `10.0.1.${routes.findIndex((r) => r[0] === path) + 1}`);
      const res = await handler(req);
      expect(res.status).toBe(413);
      expect(counter.pulled).toBeLessThanOrEqual(PRE_AUTH_BODY_LIMIT + 2 * CHUNK);
    });
  }

  it("a small body is still read and answered", async () => {
    const res = await authenticateOptions(
      new Request("http://localhost/api/passkeys/authenticate/options", {
        method: "POST",
        headers: { "Content-Type": "application/json", [CLIENT_ADDRESS_HEADER]: "10.0.2.1" },
        body: "{}",
      }),
    );
    expect(res.status).toBe(200);
    expect((await res.json()).challengeId).toEqual(expect.any(String));
    const bad = await registerOptions(
      new Request("http://localhost/api/passkeys/register/options", {
        method: "POST",
        headers: { "Content-Type": "application/json", [CLIENT_ADDRESS_HEADER]: "10.0.2.2" },
        body: '{"token":"\\ud800"}',
      }),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors[0]).toMatchObject({ code: "INVALID_FORMAT" });
  });
});
