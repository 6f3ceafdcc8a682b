import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { setupPending } from "@/server/members/sessions";
import { bootstrap, setupLinkIfPending } from "@/server/setup/bootstrap";

/**
 * Issue 27, item 8: in a fleet each web process printed a set-up link of its own at start. One
 * link per deployment: the process that makes it prints it; `npx svc setup-link` makes a new one
 * whenever asked.
 */
describe("the set-up link of a fleet", () => {
  it("is made once by the processes that start, two of them at the same moment included; the CLI makes a new one", async () => {
    const { rootOrgDid } = await bootstrap();
    expect(await setupPending(await database(), rootOrgDid)).toBe(true);
    const atStart = await Promise.all([setupLinkIfPending(rootOrgDid), setupLinkIfPending(rootOrgDid)]);
    expect(atStart.filter(Boolean)).toHaveLength(1);
    expect(await setupLinkIfPending(rootOrgDid)).toBeUndefined();
    const asked = await setupLinkIfPending(rootOrgDid, { fresh: true });
    expect(asked).toMatch(/^https?:\/\//);
    expect(asked).not.toBe(atStart.find(Boolean));
  });
});
