import type { Db } from "../db/client";
import type { ApprovalRequest as Row } from "../db/generated/sqlite/client";
import { domainError, Forbidden, ValidationFailed, type FieldError } from "../errors";
import type { Principal } from "../governance/principal";
import { coveredBy } from "../identity/capabilities";
import { chainParties } from "../identity/chainParties";
import { hasFreshPasskeyAssertion } from "../identity/passkeyStepUp";
import { checkOwnRequest, decidesForRole } from "./decidingAuthority";
import { findApproval } from "./getApproval";
import { STEP_UP_RISK_LEVELS, type ApprovalRespond, type ApprovalStatus, type RiskLevel } from "./schemas";
import { assertNotExpired, settleApproval, type SettleData } from "./settleApproval";
import { paramsHash, publicApprovalView } from "./views";

export const RESPOND_CAPABILITY = "svc_api:approvals:respond";
export const ADMIN_CAPABILITY = "svc_api:approvals:admin";
/** How old a passkey assertion may be for a console decision on a high or critical request. */
export { STEP_UP_MAX_AGE_MS } from "../identity/passkeyStepUp";
/** Delegation kinds an agent run acts under: they may ask, never decide. */
const AGENT_RUN_KINDS = new Set(["execution", "trigger"]);

const FIELDS_OF: Record<ApprovalRespond["decision"], (keyof ApprovalRespond)[]> = {
  approve: [],
  approve_with_modifications: ["modified_params"],
  reject: [],
  delegate: ["delegated_to"],
  override: ["override_action"],
};
const STATUS_OF: Record<ApprovalRespond["decision"], ApprovalStatus> = {
  approve: "approved",
  approve_with_modifications: "approved_with_modifications",
  reject: "rejected",
  delegate: "delegated",
  override: "overridden",
};

/**
 * Decides a request: approve, approve with modifications (what then runs is `modified_params`,
 * and the grant it creates is bound to their canonical SHA-256), reject, delegate to another
 * approver of the organization, or override (svc_api:approvals:admin). Refused (403) to any agent
 * run, to the requester whatever credential they use and to any chain through an agent's
 * delegation (`checkOwnRequest`), to anyone but the named approvers or the members of the named
 * role of the request's current level (or its delegate), and, on a high or critical request,
 * without a step-up: a passkey assertion at most 5 minutes old in the console, a chain with no
 * agent's delegation through /v1. A request past its `expires_at` is 409, swept or not. The
 * decision records who decided, how it was stepped up and the hash of what was approved.
 */
export async function respondToApproval(db: Db, principal: Principal, id: string, input: ApprovalRespond) {
  const row = await findApproval(db, principal, id);
  checkFields(input);
  await checkDecider(db, principal, row, input);
  const stepUp = await checkStepUp(db, principal, row.riskLevel as RiskLevel);
  const to = STATUS_OF[input.decision];
  const now = new Date();
  assertNotExpired(row, to, now);
  const data: SettleData = {
    respondedBy: principal.actorDid,
    responseComment: input.comment ?? null,
    respondedAt: now,
    stepUp,
  };
  if (input.decision === "approve") data.decisionHash = paramsHash(row.requestData);
  if (input.decision === "approve_with_modifications") {
    data.modifiedParams = input.modified_params!;
    data.decisionHash = paramsHash(input.modified_params);
  }
  if (input.decision === "override") {
    data.overrideAction = input.override_action!;
    data.decisionHash = paramsHash({ override_action: input.override_action });
  }
  if (input.decision === "delegate") {
    await checkDelegate(db, principal, row, input.delegated_to!);
    data.delegatedTo = input.delegated_to!;
    data.approverDids = `|${input.delegated_to}|`;
    data.approverRole = null;
  }
  const settled = await settleApproval(db, row, to, data);
  if (to === "approved" || to === "approved_with_modifications") {
    await db.approvalGrant.create({
      data: { approvalId: row.id, orgDid: row.orgDid, paramsHash: settled.decisionHash! },
    });
  }
  return publicApprovalView(settled);
}

/** Each decision carries exactly the fields it needs. */
function checkFields(input: ApprovalRespond): void {
  const errors: FieldError[] = [];
  const needed = FIELDS_OF[input.decision];
  for (const field of ["modified_params", "delegated_to", "override_action"] as const) {
    if (needed.includes(field) && input[field] === undefined)
      errors.push({ field, code: "REQUIRED_FIELD_MISSING", message: `required with decision ${input.decision}` });
    if (!needed.includes(field) && input[field] !== undefined)
      errors.push({ field, code: "CONFLICTING_FIELDS", message: `not allowed with decision ${input.decision}` });
  }
  if (errors.length > 0) throw ValidationFailed(errors);
}

async function checkDecider(db: Db, principal: Principal, row: Row, input: ApprovalRespond): Promise<void> {
  if (AGENT_RUN_KINDS.has(principal.kind))
    throw Forbidden("An agent run may ask for approval but never decide one.", { reason: "agent_decider" });
  const decider = await checkOwnRequest(db, principal, row);
  const admin = coveredBy(principal.capabilities, ADMIN_CAPABILITY);
  if (input.decision === "override" && !admin)
    throw Forbidden(`Overriding a request needs the capability ${ADMIN_CAPABILITY}.`, {
      missing_capability: ADMIN_CAPABILITY,
    });
  if (admin) return;
  if (row.approverDids && !row.approverDids.includes(`|${principal.actorDid}|`))
    throw Forbidden(
      row.status === "delegated"
        ? "This request was delegated to another approver."
        : "This request is assigned to other approvers.",
      { reason: "not_assigned" },
    );
  if (row.approverRole && !(await decidesForRole(db, principal, decider, row.approverRole)))
    throw Forbidden(`This request is assigned to the ${row.approverRole} role.`, { reason: "not_assigned" });
}

/**
 * A high or critical decision needs more than a token: in the console (a session), a passkey
 * assertion with user verification at most 5 minutes old made in that very session (its sign-in,
 * or the inbox's confirmation, which replaces the session): the same person's sign-in elsewhere
 * does not lend it to a stale or stolen cookie; through /v1, a delegation not issued to an agent
 * passport.
 */
async function checkStepUp(
  db: Db,
  principal: Principal,
  risk: RiskLevel,
): Promise<"passkey" | "non_agent_delegation" | null> {
  if (!STEP_UP_RISK_LEVELS.includes(risk)) return null;
  if (principal.kind === "session") {
    if (!(await hasFreshPasskeyAssertion(db, principal)))
      throw domainError(
        "approval_step_up_required",
        `A ${risk} request needs a passkey confirmation made in this session at most 5 minutes ago: confirm with your passkey and decide again.`,
        { step_up: "passkey" },
      );
    return "passkey";
  }
  if ((await chainParties(db, principal.orgDid, principal.chain)).throughAgent)
    throw domainError(
      "approval_step_up_required",
      `A ${risk} request cannot be decided through a delegation issued to an agent passport (nor one derived from it); use a person's or the organization's.`,
      { step_up: "non_agent_delegation" },
    );
  return "non_agent_delegation";
}

/** The delegate must be a passport of the organization that may answer: a console approver or admin, or a holder of a live delegation covering svc_api:approvals:respond. */
async function checkDelegate(db: Db, principal: Principal, row: Row, did: string): Promise<void> {
  const refuse = (message: string) => ValidationFailed([{ field: "delegated_to", code: "UNKNOWN_PASSPORT", message }]);
  if (did === row.requesterPassportId || did === principal.actorDid)
    throw ValidationFailed([
      { field: "delegated_to", code: "OUT_OF_RANGE", message: "neither the requester nor yourself" },
    ]);
  const passport = await db.passport.findFirst({ where: { did, orgDid: row.orgDid }, select: { type: true } });
  if (!passport) throw refuse(`no passport ${did} in your organization`);
  if (passport.type === "agent") throw refuse(`${did} is an agent's passport: an agent may ask, never decide`);
  const member = await db.member.findUnique({ where: { passportDid: did } });
  if (member && member.status === "active" && member.orgDid === row.orgDid && member.role !== "viewer") return;
  const delegations = await db.delegation.findMany({
    where: { delegateDid: did, orgDid: row.orgDid, revokedAt: null, expiresAt: { gt: new Date() } },
    select: { capabilities: true, kind: true },
  });
  const holds = delegations.some(
    (d) => !AGENT_RUN_KINDS.has(d.kind) && coveredBy(d.capabilities as string[], RESPOND_CAPABILITY),
  );
  if (!holds) throw refuse(`${did} holds no delegation covering ${RESPOND_CAPABILITY}`);
}
