import { describe, expect, it } from "vitest";
import { serviceEntry, type ServiceRecord } from "./appendServiceRecord";

const base: ServiceRecord = {
  org_did: "did:web:example.org",
  grantor_did: null,
  capability: null,
  operation: "TEST service",
  resource_type: "approval",
  resource_id: "apr_1",
  decision: "allowed",
  status: 200,
  request_hash: "x",
};

describe("the one rule for who the service acts as", () => {
  it("every service record has an actor: the delegate under a delegation, the organization otherwise", () => {
    const cases: Array<[ServiceRecord["actingFor"], string, string | null]> = [
      [undefined, base.org_did, null],
      [null, base.org_did, null],
      [{ delegationId: "dlg_1", delegateDid: "did:key:agent" }, "did:key:agent", "dlg_1"],
      // A delegation gone meanwhile: the organization acts, the record still names the delegation.
      [{ delegationId: "dlg_2", delegateDid: null }, base.org_did, "dlg_2"],
      [{ delegationId: "dlg_3", delegateDid: undefined }, base.org_did, "dlg_3"],
    ];
    for (const [actingFor, actor, delegation] of cases) {
      const entry = serviceEntry({ ...base, actingFor });
      expect(entry.actor_did).toBe(actor);
      expect(entry.actor_did).not.toBeNull();
      expect(entry.delegation_id).toBe(delegation);
      expect(entry.request_id).toMatch(/^req_/);
      expect(entry).not.toHaveProperty("actingFor");
    }
  });

  it("keeps a request id it is given (a run's id, a delivery's message id)", () => {
    expect(serviceEntry({ ...base, request_id: "exe_1" }).request_id).toBe("exe_1");
  });
});
