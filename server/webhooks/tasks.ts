import type { JobKind } from "../jobs";
import { DELIVER_JOB, deliverWebhookJob, type DeliverPayload } from "./deliveryJob";

// Deliveries wait on the network, not the CPU: many at once keep a slow receiver from holding up the rest.
const deliverJob: JobKind<DeliverPayload> = { concurrency: 32, handler: (job) => deliverWebhookJob(job) };

export const webhookJobKinds = { [DELIVER_JOB]: deliverJob as JobKind };
