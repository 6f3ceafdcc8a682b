import type { Db } from "../db/client";
import { newId } from "../ids";
import { invokeLoadedAgent, loadInvocableAgent } from "../executions/invokeAgent";
import type { SubscriptionDispatcher } from "./dispatch";
import { subscriptionsChanged } from "./matcher";
import { triggerPrincipal } from "../agents/triggerAuthority";

interface ManifestOn {
  on?: { event: string; description: string }[];
}

/**
 * Brings an agent's `agent_trigger` subscriptions in line with its state, in the caller's
 * transaction: one active subscription per `on` entry of the current version while the agent is
 * active; the rest disabled (kept, so events that matched them still name them). Called wherever
 * the agent's status or current version changes (deploy outcome, activate, deactivate); the bus
 * re-reads matched subscriptions in its own transaction, so a deactivation stops triggers at once.
 */
export async function syncAgentTriggers(tx: Db, agentId: string): Promise<void> {
  const agent = await tx.agent.findUnique({ where: { id: agentId } });
  if (!agent) return;
  const version = agent.currentVersionId
    ? await tx.agentVersion.findUnique({ where: { id: agent.currentVersionId }, select: { manifest: true } })
    : null;
  const wanted = new Map<string, string>();
  if (agent.status === "active")
    for (const entry of (version?.manifest as ManifestOn | undefined)?.on ?? [])
      if (!wanted.has(entry.event)) wanted.set(entry.event, entry.description);
  const existing = await tx.subscription.findMany({ where: { agentId, kind: "agent_trigger" } });
  let changed = false;
  for (const sub of existing) {
    const pattern = (sub.eventTypes as string[])[0]!;
    const description = wanted.get(pattern);
    if (description !== undefined) {
      wanted.delete(pattern);
      if (
        sub.status !== "active" ||
        sub.description !== description ||
        sub.createdByDelegationId !== agent.triggerDelegationId
      ) {
        await tx.subscription.update({
          where: { id: sub.id },
          data: {
            status: "active",
            description,
            disabledReason: null,
            createdByDelegationId: agent.triggerDelegationId,
          },
        });
        changed = true;
      }
    } else if (sub.status === "active") {
      const reason = agent.status === "active" ? "no longer in the agent's manifest" : `agent ${agent.status}`;
      await tx.subscription.update({ where: { id: sub.id }, data: { status: "disabled", disabledReason: reason } });
      changed = true;
    }
  }
  for (const [event, description] of wanted) {
    await tx.subscription.create({
      data: {
        id: newId("sub"),
        orgDid: agent.orgDid,
        kind: "agent_trigger",
        eventTypes: [event],
        targetUrl: "",
        agentId,
        description,
        status: "active",
        createdByDelegationId: agent.triggerDelegationId,
      },
    });
    changed = true;
  }
  if (changed) await subscriptionsChanged(tx);
}

/**
 * A matched trigger queues an ordinary execution of the agent through the invoke service, invoked
 * by the subscription's trigger authority: a delegation derived from whoever deployed or activated
 * the agent, narrowed to its manifest (see agents/triggerAuthority.ts). So platform events, which
 * have no caller, start runs too, and each run's record names that person or key as grantor;
 * revoking them silences the triggers and cancels the runs they carry. The manifest's
 * `event_trigger:<pattern>` declaration is what lets the event start the agent at all (no
 * declaration, no subscription). A subscription from before trigger authorities existed still
 * derives from the sender's delegation, as it did.
 */
export const dispatchToTrigger: SubscriptionDispatcher = async (tx, { event, subscription, principal: sender }) => {
  if (!subscription.agentId) return;
  // A trigger runs under the authority of whoever deployed or activated the agent (its trigger
  // delegation); a subscription from before trigger authorities derives from the sender's.
  const principal = subscription.createdByDelegationId
    ? await triggerPrincipal(tx, subscription.createdByDelegationId)
    : sender.delegationId
      ? sender
      : undefined;
  if (!principal) return;
  // Read once, for this check and for the invoke service (invokeLoadedAgent).
  const agent = await loadInvocableAgent(tx, subscription.agentId, principal.orgDid);
  if (agent?.status !== "active" || !agent.currentVersionId) return;
  const input = {
    event_id: event.id,
    event_type: event.type,
    payload: event.payload,
    org_did: event.orgDid,
    verification: {
      provenance_record_id: event.provenanceId,
      // Null until the integrator gives the event's record its position (PostgreSQL: after this
      // transaction commits); the run fills it in when it starts (executions/runExecution.ts).
      leaf_index: event.provenanceSeq === null ? null : Number(event.provenanceSeq),
      actor: event.actorDid,
      via: event.ingestedVia,
    },
  };
  const execution = await invokeLoadedAgent(tx, principal, agent, { input, max_attempts: 3 });
  return { executionId: execution.id };
};
