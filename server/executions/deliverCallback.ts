import { config } from "../config";
import { database } from "../db/client";
import { newId } from "../ids";
import { finishJob, retryJob, type ClaimedJob } from "../jobs";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { deliveryRecord, sendSignedPost } from "../signing/signedPost";
import { signingSecrets } from "./callbackSecret";
import { executionView } from "./views";
import { executionChanged } from "./executionChanged";

/**
 * One attempt of the `execution.callback` job: POST `{type, timestamp, data: AsyncExecution}` to
 * the callback URL through the SSRF guard, signed with Standard Webhooks by every current secret
 * of the organization (`webhook-id` = msg_<execution id> on every attempt, so receivers
 * deduplicate). A 2xx is success. The attempt's log row, the execution's callback fields and the
 * job's end or retry (on SVC_CALLBACK_RETRY_SCHEDULE) and a provenance record of the attempt
 * commit together. A refused destination is
 * final at once: another attempt would be refused too.
 */
export async function deliverCallbackJob(job: ClaimedJob<{ executionId: string }>): Promise<void> {
  const db = await database();
  const e = await db.read.asyncExecution.findUnique({ where: { id: job.payload.executionId } });
  if (!e?.callbackUrl || e.callbackSuccess !== null) return;
  const url = e.callbackUrl;
  const secrets = await db.writeTx((tx) => signingSecrets(tx, e.orgDid));
  const post = {
    url,
    msgId: `msg_${e.id}`,
    body: JSON.stringify({
      type: `execution.${e.status}`,
      timestamp: new Date().toISOString(),
      data: executionView(e),
    }),
    secrets,
    userAgent: "svc-callbacks",
    timeoutMs: 10_000,
  };
  const outcome = await sendSignedPost(post);
  const { statusCode, success, error, timestamp } = outcome;
  const final = outcome.refused;
  const schedule = config().callbackRetrySchedule;
  const retry = !success && !final && job.attempts < job.maxAttempts;
  const delayMs = retry ? (schedule[job.attempts] ?? schedule[schedule.length - 1] ?? 0) * 1000 : 0;
  await db.writeTx(async (tx) => {
    executionChanged(tx, e);
    await tx.callbackAttempt.create({
      data: {
        id: newId("cba"),
        executionId: e.id,
        orgDid: e.orgDid,
        attempt: job.attempts,
        statusCode,
        success,
        durationMs: outcome.durationMs,
        error,
        nextAttemptAt: retry ? new Date(Date.now() + delayMs) : null,
        createdAt: timestamp,
      },
    });
    await tx.asyncExecution.update({
      where: { id: e.id },
      data: {
        callbackAttempts: { increment: 1 },
        ...(success ? { callbackSuccess: true } : retry ? {} : { callbackSuccess: false }),
      },
    });
    // The outbound call is the service acting for the run: recorded under the run's delegation.
    const delegation = await tx.delegation.findUnique({ where: { id: e.delegationId }, select: { delegateDid: true } });
    await appendServiceRecord(
      tx,
      db.engine,
      deliveryRecord("CALLBACK", post, outcome, {
        org_did: e.orgDid,
        actingFor: { delegationId: e.delegationId, delegateDid: delegation?.delegateDid },
        grantor_did: e.requesterPassportId,
        resource_type: "execution",
        resource_id: e.id,
      }),
    );
    if (retry) await retryJob(tx, job, error ?? `HTTP ${statusCode}`, delayMs);
    else await finishJob(tx, job);
  });
}
