import { afterEach, describe, expect, it, vi } from "vitest";

/** The console's session cookie carries Secure whenever the console is served over https. */
async function optionsWith(env: Record<string, string>) {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return (await import("./nextAuth")).authOptions;
}

afterEach(() => vi.unstubAllEnvs());

describe("console session cookies", () => {
  it("are Secure when SVC_PUBLIC_URL is https, even if NEXTAUTH_URL is not", async () => {
    expect(
      (await optionsWith({ SVC_PUBLIC_URL: "https://svc.example.com", NEXTAUTH_URL: "http://localhost:3000" }))
        .useSecureCookies,
    ).toBe(true);
  });
  it("are not Secure over plain http (a browser would drop them)", async () => {
    expect((await optionsWith({ SVC_PUBLIC_URL: "http://localhost:3000", NEXTAUTH_URL: "" })).useSecureCookies).toBe(
      false,
    );
  });
});
