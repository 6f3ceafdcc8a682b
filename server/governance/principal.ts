/**
 * The caller of a governed call, as the gate resolved it: who acts, under which delegation, who
 * allowed it, and what it may do. Every transport produces one (a bearer token, a console session,
 * a run's delegation inside the sandbox bridge), and every service receives it from the gate.
 */
export interface Principal {
  delegationId: string;
  orgDid: string;
  /** The actor: the delegation's delegate (a passport DID, or the organization's DID for an API key). */
  actorDid: string;
  /** Who allowed it: the delegation's grantor. */
  grantorDid: string;
  capabilities: string[];
  environment: string | null;
  riskLevel: string;
  kind: string;
  expiresAt: Date;
  /** The delegation's ancestors (root first) and itself: revoking any of them refuses the token. */
  chain: string[];
  /** A signed-in person's console role (sessions only). */
  role?: string;
}
