import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { subscriptionsChanged } from "../events/matcher";
import { newWebhookSecret } from "../signing/webhookSecrets";
import type { WebhookCreateRequest } from "./schemas";
import { webhookView } from "./views";
import { sealWebhookSecret } from "./webhookSecrets";
import { assertMayRead, webhookTargetUrl } from "./webhookRules";

/** Registers a webhook; its `whsec_` secret is in this answer only (sealed at rest). */
export async function createWebhook(tx: Db, principal: Principal, body: z.output<typeof WebhookCreateRequest>) {
  const url = webhookTargetUrl(body.target_url);
  assertMayRead(principal, body.event_types);
  const id = newId("whk");
  const secret = newWebhookSecret();
  const row = await tx.subscription.create({
    data: {
      id,
      orgDid: principal.orgDid,
      kind: "webhook",
      eventTypes: [...new Set(body.event_types)],
      targetUrl: url,
      description: body.description ?? "",
      status: "active",
      createdByDelegationId: principal.delegationId,
      secretSealed: await sealWebhookSecret(principal.orgDid, id, secret),
      createdAt: new Date(),
    },
  });
  await subscriptionsChanged(tx);
  const { health: _none, ...view } = webhookView(row);
  return { ...view, secret };
}
