import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProvider } from "../../tests/integration/marketplaceProvider";
import { resetConfig } from "../config";
import { actionUrl, executeAction } from "./executeAction";

let provider: Awaited<ReturnType<typeof startProvider>>;
beforeAll(async () => {
  provider = await startProvider();
  provider.accept.add("tok_good");
  process.env.SVC_OUTBOUND_ALLOW = provider.hostPort;
  resetConfig();
});
afterAll(async () => {
  delete process.env.SVC_OUTBOUND_ALLOW;
  resetConfig();
  await provider.close();
});

const run = (method: string, path: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  executeAction({
    action: { method, path },
    input,
    baseUrl: `${provider.url}/api/`,
    accessToken: "tok_good",
    timeoutMs: 5_000,
    maxBytes: 1024 * 1024,
    ...extra,
  });

describe("executeAction", () => {
  it("fills path segments, sends the rest as the query of a GET, with the bearer token", async () => {
    const out = await run("GET", "/repos/{owner}/{repo}/issues", {
      owner: "a b",
      repo: "x/y",
      state: "open",
      labels: ["p1", "p2"],
    });
    expect(out.status).toBe(200);
    expect(out.truncated).toBe(false);
    expect(out.result).toMatchObject({
      method: "GET",
      path: "/api/repos/a%20b/x%2Fy/issues",
      query: { state: "open", labels: ["p1", "p2"] },
      body: null,
    });
    expect(provider.received.at(-1)!.headers.authorization).toBe("Bearer tok_good");
  });

  it("sends the rest of a POST's input as its JSON body", async () => {
    const out = await run("POST", "/teams/{team}/issues", { team: 7, title: "Hi", nested: { a: [1] } });
    expect(out.result).toMatchObject({
      method: "POST",
      path: "/api/teams/7/issues",
      body: { title: "Hi", nested: { a: [1] } },
    });
  });

  it("reports the provider's status as an outcome, 401 for a wrong token", async () => {
    expect((await run("GET", "/status/{code}", { code: 422 })).status).toBe(422);
    expect((await run("GET", "/x", {}, { accessToken: "tok_bad" })).status).toBe(401);
  });

  it("cuts a 50 MB answer at the cap and does not parse it", async () => {
    const started = Date.now();
    const out = await run("GET", "/big/{n}", { n: 50 * 1024 * 1024 }, { maxBytes: 256 * 1024 });
    expect(out).toMatchObject({ status: 200, truncated: true, result: null });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("refuses a base URL at a private address not in SVC_OUTBOUND_ALLOW, before connecting", async () => {
    await expect(run("GET", "/x", {}, { baseUrl: "http://10.0.0.1/api", timeoutMs: 300 })).rejects.toMatchObject({
      code: "outbound_refused",
    });
    await expect(run("GET", "/x", {}, { baseUrl: "http://127.0.0.1:1/api", timeoutMs: 300 })).rejects.toMatchObject({
      code: "outbound_refused",
    });
  });

  it("times out a provider that does not answer in time", async () => {
    await expect(run("GET", "/slow/{ms}", { ms: 2_000 }, { timeoutMs: 200 })).rejects.toMatchObject({
      code: "outbound_timeout",
    });
  });

  it("refuses path values that would walk out of the action's path, and missing ones", () => {
    expect(() => actionUrl("https://api.example.com/v1", "/repos/{owner}", { owner: ".." })).toThrow(/cannot be/);
    expect(() => actionUrl("https://api.example.com/v1", "/repos/{owner}", {})).toThrow(/needs `owner`/);
    expect(actionUrl("https://api.example.com/v1/", "repos/{o}", { o: "x", q: 1 })).toMatchObject({ rest: { q: 1 } });
    expect(actionUrl("https://api.example.com/v1/", "repos/{o}", { o: "x" }).url.toString()).toBe(
      "https://api.example.com/v1/repos/x",
    );
  });
});
