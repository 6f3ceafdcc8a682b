import { describe, expect, it } from "vitest";
import { config } from "@/server/config";
import { database } from "@/server/db/client";
import { appRouter } from "@/server/appRouter";
import { handlerWithSession } from "@/server/trpc/handler";
import { consoleMember } from "./consoleMembers";

/**
 * Issue 26, item 19: a state-changing console request must come from the console's own origin.
 * `Sec-Fetch-Site` alone is not enough (older browsers and some clients do not send it): `Origin`,
 * or `Referer` without it, is checked against SVC_PUBLIC_URL and the request's own host.
 */
const invite = (admin: { delegationId: string }, headers: Record<string, string>) =>
  handlerWithSession(appRouter, async () => ({ delegationId: admin.delegationId }))(
    new Request("http://svc.internal:3000/api/trpc/members.invite", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ role: "viewer", hours: 1 }),
    }),
  );

const invites = async () => (await database()).read.invite.count();

describe("the console's cross-site check (issue 26, item 19)", () => {
  it("refuses a session's mutation from another origin, even without Sec-Fetch-Site", async () => {
    const admin = await consoleMember("admin");
    const before = await invites();
    for (const headers of [
      { Origin: "https://evil.example" },
      { Origin: "null" },
      { Referer: "https://evil.example/page" },
      { Origin: "https://svc.internal:3000.evil.example" },
    ] as Record<string, string>[]) {
      const res = await invite(admin, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((await res.json()).detail).toMatch(/Cross-site requests to the console API are refused/);
    }
    expect(await invites()).toBe(before);
  });

  it("lets the console's own origin through, and callers that name no origin", async () => {
    const admin = await consoleMember("admin");
    for (const headers of [
      { Origin: new URL(config().publicUrl).origin },
      { Origin: "http://svc.internal:3000" },
      { Host: "console.example.com", Origin: "https://console.example.com" },
      { Referer: `${config().publicUrl}/members` },
      {},
    ] as Record<string, string>[]) {
      const res = await invite(admin, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
    }
  });
});
