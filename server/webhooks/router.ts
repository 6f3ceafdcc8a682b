import { mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import { webhookLive } from "./liveViews";
import * as op from "./operations";

/** The console's webhook procedures, built from the /v1 operations. */
export const webhooksRouter = router({
  list: queryFrom(op.listWebhooksOp),
  create: mutationFrom(op.createWebhookOp),
  get: queryFrom(op.getWebhookOp),
  update: mutationFrom(op.updateWebhookOp),
  delete: mutationFrom(op.deleteWebhookOp),
  deliveries: queryFrom(op.listDeliveriesOp),
  delivery: queryFrom(op.getDeliveryOp),
  retryDelivery: mutationFrom(op.retryDeliveryOp),
  rotateSecret: mutationFrom(op.rotateWebhookSecretOp),
  live: webhookLive,
});
