import type { Principal } from "../governance/principal";

/** An organization record belongs to the organization that created it; each also sees itself. */
export const visibleTo = (principal: Principal) => ({
  OR: [{ orgDid: principal.orgDid }, { parentOrgDid: principal.orgDid }],
});
