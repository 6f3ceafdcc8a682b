import { z } from "zod";
import { liveView } from "../trpc/live";
import { WEBHOOKS_CHANNEL } from "./webhookChanged";
import { getWebhook } from "./getWebhook";
import { listDeliveries } from "./listDeliveries";
import * as s from "./schemas";

/** One webhook's settings and health with its delivery log's first page, live. */
export const webhookLive = liveView({
  summary: "A webhook and its delivery log, live",
  channel: WEBHOOKS_CHANNEL,
  capability: "svc_api:events:read",
  resourceType: "webhook",
  input: z.object({ id: s.WebhookIdParams.shape.id }).extend(s.WebhookDeliveryListQuery.omit({ cursor: true }).shape),
  concerns: (change, input) => change.id === input.id,
  resourceOf: (input) => input.id,
  async load(ctx) {
    const { id, ...query } = ctx.input;
    const [webhook, deliveries] = await Promise.all([
      getWebhook(ctx.db, ctx.principal, id),
      listDeliveries(ctx.db, ctx.principal, id, query, ctx.secret),
    ]);
    return { webhook, deliveries };
  },
});
