import { describe, expect, it } from "vitest";
import { usageRows, type CapabilityCounts } from "./capabilityUsage";
import { intersectCapabilities } from "./narrowDelegation";

const at = (iso: string) => new Date(iso);

describe("usageRows", () => {
  const counts: CapabilityCounts = new Map([
    ["svc_api:agents:read", { calls: 3, refused: 1, lastUsedAt: at("2026-11-20T00:00:00Z") }],
    ["svc_api:agents:invoke", { calls: 2, refused: 0, lastUsedAt: at("2026-11-21T00:00:00Z") }],
    ["svc_api:workflows:read", { calls: 0, refused: 4, lastUsedAt: null }],
  ]);

  it("sums a held wildcard over what it covers, lists the covered ones used, then those only refused", () => {
    const { capabilities, unused } = usageRows(["svc_api:agents:*", "svc_api:passports:read"], counts);
    expect(capabilities).toEqual([
      {
        capability: "svc_api:agents:*",
        granted: true,
        calls: 5,
        refused: 1,
        last_used_at: "2026-11-21T00:00:00.000Z",
      },
      { capability: "svc_api:passports:read", granted: true, calls: 0, refused: 0, last_used_at: null },
      {
        capability: "svc_api:agents:invoke",
        granted: true,
        calls: 2,
        refused: 0,
        last_used_at: "2026-11-21T00:00:00.000Z",
      },
      {
        capability: "svc_api:agents:read",
        granted: true,
        calls: 3,
        refused: 1,
        last_used_at: "2026-11-20T00:00:00.000Z",
      },
      { capability: "svc_api:workflows:read", granted: false, calls: 0, refused: 4, last_used_at: null },
    ]);
    expect(unused).toEqual(["svc_api:passports:read"]);
  });

  it("names a held capability once however often the grant repeats it", () => {
    expect(usageRows(["svc_api:agents:read", "svc_api:agents:read"], counts).capabilities).toHaveLength(3);
  });
});

describe("intersectCapabilities", () => {
  it("keeps what the narrower grant covers, and the grant's own under a wider wildcard", () => {
    expect(intersectCapabilities(["svc_api:agents:read", "svc_api:events:read"], ["svc_api:agents:*"])).toEqual([
      "svc_api:agents:read",
    ]);
    expect(intersectCapabilities(["svc_api:*"], ["svc_api:agents:read", "svc_api:events:read"])).toEqual([
      "svc_api:agents:read",
      "svc_api:events:read",
    ]);
    expect(intersectCapabilities(["svc_api:events:read"], ["svc_api:agents:read"])).toEqual([]);
  });
});
