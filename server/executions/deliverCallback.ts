import { config } from "../config";
import { database } from "../db/client";
import { newId } from "../ids";
import { finishJob, retryJob, type ClaimedJob } from "../jobs";
import { OutboundError, OutboundRefused } from "../outbound/errors";
import { outboundRequest } from "../outbound/outboundRequest";
import { appendInTransaction } from "../provenance/appendProvenance";
import { requestHash } from "../provenance/record";
import { signatureHeaders } from "../signing/signatureHeaders";
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
  const timestamp = new Date();
  const body = JSON.stringify({ type: `execution.${e.status}`, timestamp: timestamp.toISOString(), data: executionView(e) });
  const headers = { "content-type": "application/json", "user-agent": "svc-callbacks", ...signatureHeaders({ msgId: `msg_${e.id}`, timestamp, body, secrets }) };
  const t0 = Date.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  let final = false;
  try {
    const res = await outboundRequest(url, { method: "POST", headers, body, timeoutMs: 10_000, maxBytes: 4096 });
    statusCode = res.status;
  } catch (err) {
    error = err instanceof OutboundError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    final = err instanceof OutboundRefused;
  }
  const success = statusCode !== null && statusCode >= 200 && statusCode < 300;
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
        durationMs: Date.now() - t0,
        error: error?.slice(0, 1000) ?? null,
        nextAttemptAt: retry ? new Date(Date.now() + delayMs) : null,
        createdAt: timestamp,
      },
    });
    await tx.asyncExecution.update({
      where: { id: e.id },
      data: { callbackAttempts: { increment: 1 }, ...(success ? { callbackSuccess: true } : retry ? {} : { callbackSuccess: false }) },
    });
    // The outbound call is the service acting for the run: recorded under the run's delegation.
    const delegation = await tx.delegation.findUnique({ where: { id: e.delegationId }, select: { delegateDid: true } });
    await appendInTransaction(tx, db.engine, {
      org_did: e.orgDid,
      actor_did: delegation?.delegateDid ?? e.orgDid,
      delegation_id: e.delegationId,
      grantor_did: e.requesterPassportId,
      capability: null,
      // Origin and path only: a query string may carry the receiver's token, and records are widely readable.
      operation: `CALLBACK ${callbackTarget(url)}`,
      resource_type: "execution",
      resource_id: e.id,
      decision: final ? "denied" : "allowed",
      status: statusCode ?? (final ? 403 : 502),
      request_hash: requestHash(undefined, Buffer.from(body)),
      request_id: `msg_${e.id}`,
    });
    if (retry) await retryJob(tx, job, error ?? `HTTP ${statusCode}`, delayMs);
    else await finishJob(tx, job);
  });
}

function callbackTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.slice(0, 500);
  } catch {
    return "(invalid URL)";
  }
}
