import { describe, expect, it } from "vitest";
import { CAPABILITY_PATTERN, covers, missingCapabilities } from "./capabilities";

describe("capability coverage", () => {
  it.each([
    ["svc_api:agents:read", "svc_api:agents:read", true],
    ["svc_api:agents:*", "svc_api:agents:read", true],
    ["svc_api:*", "svc_api:agents:read", true],
    ["svc_api:*", "svc_api:agents:*", true],
    ["svc_api:agents:*", "svc_api:*", false],
    ["svc_api:agents:*", "svc_api:agentsx:read", false],
    ["svc_api:agents:read", "svc_api:agents:*", false],
    ["svc_api:agents:*", "svc_api:agents:", false],
    ["svc_api:events:write", "svc_api:events:read", false],
  ])("%s covers %s: %s", (held, wanted, expected) => {
    expect(covers(held, wanted)).toBe(expected);
  });

  it("lists what is missing", () => {
    expect(missingCapabilities(["svc_api:agents:*"], ["svc_api:agents:read", "svc_api:events:write"])).toEqual([
      "svc_api:events:write",
    ]);
  });

  it("accepts capability strings and refuses others", () => {
    for (const ok of ["svc_api:agents:read", "svc_api:*", "event_trigger:invoice.created", "svc_api:agents:*"])
      expect(CAPABILITY_PATTERN.test(ok), ok).toBe(true);
    for (const bad of ["", "*", "svc_api:*:read", "SVC:x", "svc_api::x", "svc api:x"])
      expect(CAPABILITY_PATTERN.test(bad), bad).toBe(false);
  });
});
