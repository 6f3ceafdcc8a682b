import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "../config";
import { assertOutboundUrl } from "./assertOutboundUrl";

/** A refused local receiver's 400 names the exact SVC_OUTBOUND_ALLOW value that would open it. */
function messageFor(url: string, options: { requireHttps?: boolean } = {}): string | undefined {
  try {
    assertOutboundUrl(url, { ...options, field: "callback_url" });
  } catch (e) {
    return (e as { extra?: { errors?: { message: string }[] } }).extra?.errors?.[0]?.message;
  }
  return undefined;
}

afterEach(() => {
  delete process.env.SVC_OUTBOUND_ALLOW;
  resetConfig();
});

describe("assertOutboundUrl's refusal", () => {
  it("names the SVC_OUTBOUND_ALLOW entry for the URL's host and port, and says a restart is needed", () => {
    delete process.env.SVC_OUTBOUND_ALLOW;
    resetConfig();
    expect(messageFor("http://127.0.0.1:8080/hook")).toMatch(
      /127\.0\.0\.1 is a loopback address.*restart the server with SVC_OUTBOUND_ALLOW=127\.0\.0\.1:8080 /,
    );
    expect(messageFor("http://localhost:4000/cb")).toContain("SVC_OUTBOUND_ALLOW=localhost:4000 ");
    expect(messageFor("https://10.1.2.3/in")).toContain("SVC_OUTBOUND_ALLOW=10.1.2.3:443 ");
    expect(messageFor("http://[::1]:9000/in")).toContain("SVC_OUTBOUND_ALLOW=[::1]:9000 ");
    expect(messageFor("http://192.168.1.20/in", { requireHttps: true })).toMatch(
      /must use https.*SVC_OUTBOUND_ALLOW=192\.168\.1\.20:80 /,
    );
    expect(messageFor("http://hooks.example.com/in", { requireHttps: true })).toMatch(/not names/);
  });

  it("the value it names opens the URL", () => {
    for (const [url, entry] of [
      ["http://127.0.0.1:8080/hook", "127.0.0.1:8080"],
      ["http://[::1]:9000/in", "[::1]:9000"],
      ["http://localhost:4000/cb", "localhost:4000"],
    ]) {
      process.env.SVC_OUTBOUND_ALLOW = entry;
      resetConfig();
      expect(messageFor(url!, { requireHttps: true }), url).toBeUndefined();
    }
  });
});
