import { registerJobKind } from "../jobs";
import type { Task } from "../worker/registry";
import { DELIVER_JOB, deliverWebhookJob, type DeliverPayload } from "./deliveryJob";
import "./hooks";

// Deliveries wait on the network, not the CPU: many at once keep a slow receiver from holding up the rest.
registerJobKind<DeliverPayload>(DELIVER_JOB, { concurrency: 32, handler: (job) => deliverWebhookJob(job) });

export const webhookTasks: Task[] = [];
