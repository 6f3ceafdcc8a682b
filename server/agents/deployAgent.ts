import { createHash } from "node:crypto";
import { DbNull } from "@prisma/client/runtime/client";
import type { z } from "zod";
import { config } from "../config";
import type { Database, Db } from "../db/client";
import { Forbidden, ValidationFailed } from "../errors";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import { missingCapabilities } from "../identity/capabilities";
import { enqueue } from "../jobs";
import { checkBundle, type CheckOutcome } from "../sandbox/pool";
import { isTriggerCapability, TRIGGER_CAPABILITY } from "../events/schemas";
import { syncAgentTriggers } from "../events/triggers";
import { putPlatformEvent } from "../events/platformEvents";
import { issueTriggerAuthority } from "./triggerAuthority";
import type { AgentDeployRequest, AgentManifest } from "./schemas";
import { logger } from "../telemetry/log";

export const DEFAULT_MEMORY_MB = 64;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Loading a bundle (its top-level code) must finish within this; a handler's own limit applies to runs. */
const CHECK_TIMEOUT_MS = 5_000;
export const DEPLOY_JOB = "agent.deploy";
/** With `wait`, the job is only a safety net (the process dying before the check is recorded): it runs this much later. */
const WAIT_SAFETY_NET_MS = 60_000;

type Manifest = z.output<typeof AgentManifest>;

/**
 * Deploys an agent: checks the bundle's size and hash, the manifest's limits and passport, and
 * that the deployer holds every capability the manifest asks for (an agent never holds more than
 * whoever deployed it). Adds a version (a new agent on the first deploy of a name, `deploying`)
 * and queues the `agent.deploy` job that loads the bundle in the sandbox, in the call's
 * transaction. With `wait`, `settle` loads the bundle once the call has committed (never inside
 * its transaction: on SQLite that would hold every other write for as long as the bundle's top
 * level runs) and gives the outcome; the job, queued for later, only covers a process that died first.
 */
export async function deployAgent(
  tx: Db,
  principal: Principal,
  body: z.output<typeof AgentDeployRequest>,
  requestId: string,
) {
  const cfg = config();
  const bundle = Buffer.from(body.bundleBase64, "base64");
  if (bundle.length > cfg.maxBundleBytes) {
    throw ValidationFailed([
      {
        field: "bundleBase64",
        code: "OUT_OF_RANGE",
        message: `The bundle is ${bundle.length} bytes; the limit is ${cfg.maxBundleBytes} bytes (SVC_MAX_BUNDLE_BYTES).`,
      },
    ]);
  }
  const actual = `sha256:${createHash("sha256").update(bundle).digest("hex")}`;
  if (actual !== body.bundleHash) {
    throw ValidationFailed([
      {
        field: "bundleHash",
        code: "HASH_MISMATCH",
        message: `The decoded bundle's hash is ${actual}, not the bundleHash given.`,
        received: body.bundleHash,
      },
    ]);
  }
  let code: string;
  try {
    code = new TextDecoder("utf-8", { fatal: true }).decode(bundle);
  } catch {
    throw ValidationFailed([
      { field: "bundleBase64", code: "INVALID_FORMAT", message: "The bundle must be UTF-8 text (one ES module)." },
    ]);
  }
  const manifest = body.manifest;
  const memoryMb = manifest.limits?.memory_mb ?? DEFAULT_MEMORY_MB;
  const timeoutMs = manifest.limits?.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (memoryMb > cfg.agentMaxMemoryMb)
    throw ValidationFailed([
      {
        field: "manifest.limits.memory_mb",
        code: "OUT_OF_RANGE",
        message: `At most ${cfg.agentMaxMemoryMb} MiB (SVC_AGENT_MAX_MEMORY_MB).`,
      },
    ]);
  if (timeoutMs > cfg.agentMaxTimeoutMs)
    throw ValidationFailed([
      {
        field: "manifest.limits.timeout_ms",
        code: "OUT_OF_RANGE",
        message: `At most ${cfg.agentMaxTimeoutMs} ms (SVC_AGENT_MAX_TIMEOUT_MS).`,
      },
    ]);

  assertTriggersDeclared(manifest);
  const missing = missingCapabilities(principal.capabilities, grantedCapabilities(manifest));
  if (missing.length > 0) {
    throw Forbidden(
      `An agent cannot hold more than whoever deploys it: your delegation does not cover ${missing.join(", ")}.`,
      { missing_capabilities: missing },
    );
  }
  if (manifest.passport) {
    const passport = await tx.passport.findFirst({
      where: { did: manifest.passport, orgDid: principal.orgDid, type: "agent" },
    });
    if (!passport)
      throw ValidationFailed([
        {
          field: "manifest.passport",
          code: "UNKNOWN_PASSPORT",
          message: "No agent passport with this DID in your organization.",
        },
      ]);
  }

  // An upsert, so that concurrent deploys of one name queue on the agent's row (PostgreSQL's
  // INSERT … ON CONFLICT DO UPDATE locks it) and each sees the versions committed before it.
  const agent = await tx.agent.upsert({
    where: { orgDid_name: { orgDid: principal.orgDid, name: manifest.name } },
    update: { updatedAt: new Date() },
    create: {
      id: newId("agt"),
      orgDid: principal.orgDid,
      name: manifest.name,
      description: manifest.description ?? null,
      passportId: manifest.passport ?? null,
      status: "deploying",
      capabilities: declaredCapabilities(manifest),
      deployedBy: principal.actorDid,
    },
  });
  const last = await tx.agentVersion.findFirst({
    where: { agentId: agent.id },
    orderBy: { seq: "desc" },
    select: { seq: true },
  });
  const version = await tx.agentVersion.create({
    data: {
      id: newId("agv"),
      agentId: agent.id,
      orgDid: principal.orgDid,
      seq: (last?.seq ?? 0) + 1,
      version: manifest.version,
      manifest: manifest as object,
      bundle,
      bundleHash: actual,
      memoryMb,
      timeoutMs,
      status: "deploying",
      profile: body.profile ?? null,
      region: body.region ?? null,
      traceId: requestId,
      deployedBy: principal.actorDid,
      // Its triggers will act with the deployer's authority once this version is current.
      triggerDelegationId: manifest.on?.length
        ? await issueTriggerAuthority(tx, principal, declaredCapabilities(manifest), manifest.name)
        : null,
    },
  });
  if (body.wait) {
    const jobId = await enqueue(
      tx,
      DEPLOY_JOB,
      { versionId: version.id },
      { orgDid: principal.orgDid, maxAttempts: 3, runAt: new Date(Date.now() + WAIT_SAFETY_NET_MS) },
    );
    /** After commit: checks the bundle and records the outcome; the agent's status after it ("deploying" if left to the job). */
    const settle = async (db: Database): Promise<string> => {
      try {
        const outcome = await checkBundle({
          code,
          orgDid: principal.orgDid,
          memoryMb,
          timeoutMs: Math.min(timeoutMs, CHECK_TIMEOUT_MS),
        });
        return await db.writeTx(async (t) => {
          // A crashed thread says nothing about the bundle: the job tries again, now.
          if (!outcome.ok && outcome.error.code === "internal") {
            await t.job.updateMany({ where: { id: jobId, state: "queued" }, data: { availableAt: new Date() } });
            return "deploying";
          }
          return recordDeployOutcome(t, version.id, outcome);
        });
      } catch (e) {
        logger().error({ err: e }, `deploy of version ${version.id}: the check is left to its job`);
        return "deploying";
      }
    };
    return { agentId: agent.id, status: "deploying", created: true, settle };
  }
  await enqueue(tx, DEPLOY_JOB, { versionId: version.id }, { orgDid: principal.orgDid, maxAttempts: 3 });
  return { agentId: agent.id, status: "deploying", created: false };
}

/** Every capability the manifest declares, trigger declarations included: what `Agent.capabilities` lists. */
function declaredCapabilities(manifest: Manifest): string[] {
  return [...new Set(manifest.capabilities.map((c) => c.id))];
}

/** The manifest's capabilities a run may be granted: its trigger declarations are not grants (see server/events/schemas.ts). */
function grantedCapabilities(manifest: Manifest): string[] {
  return [...new Set(manifest.capabilities.map((c) => c.id).filter((id) => !isTriggerCapability(id)))];
}

/** Every `on` entry needs `event_trigger` and `event_trigger:<its event>` declared, each with evidence. */
function assertTriggersDeclared(manifest: Manifest): void {
  const evidenced = new Set(manifest.capabilities.filter((c) => c.evidence.length > 0).map((c) => c.id));
  const errors = (manifest.on ?? []).flatMap((entry, i) =>
    [TRIGGER_CAPABILITY, `${TRIGGER_CAPABILITY}:${entry.event}`]
      .filter((needed) => !evidenced.has(needed))
      .map((needed) => ({
        field: `manifest.on.${i}.event`,
        code: "TRIGGER_NOT_DECLARED",
        message: `A trigger on ${entry.event} needs the manifest capability ${needed}, with a non-empty evidence list.`,
        received: entry.event,
      })),
  );
  if (errors.length > 0)
    throw ValidationFailed(errors, "The manifest's triggers are not all declared in its capabilities.");
}

/** Checks a queued version in the sandbox: the `agent.deploy` job's work before it records the outcome. */
export async function checkVersion(version: {
  bundle: Uint8Array;
  orgDid: string;
  memoryMb: number;
  timeoutMs: number;
}): Promise<CheckOutcome> {
  return checkBundle({
    code: Buffer.from(version.bundle).toString("utf8"),
    orgDid: version.orgDid,
    memoryMb: version.memoryMb,
    timeoutMs: Math.min(version.timeoutMs, CHECK_TIMEOUT_MS),
  });
}

/**
 * Records how loading a version ended. Ready: it becomes the agent's current version unless a later
 * deploy (higher seq) is current already (an older deploy that loaded more slowly never rolls the
 * agent back), and an agent without one (a first deploy) becomes active; a deactivated agent stays inactive. Rejected: the
 * version keeps the error, and an agent that has no working version is inactive with it.
 * Returns the agent's status afterwards.
 */
export async function recordDeployOutcome(tx: Db, versionId: string, outcome: CheckOutcome): Promise<string> {
  const version = await tx.agentVersion.findUniqueOrThrow({ where: { id: versionId }, include: { agent: true } });
  const agent = version.agent;
  if (version.status !== "deploying") return agent.status;
  const manifest = version.manifest as Manifest;
  if (outcome.ok) {
    await tx.agentVersion.update({ where: { id: versionId }, data: { status: "ready", deployedAt: new Date() } });
    const current = agent.currentVersionId
      ? await tx.agentVersion.findUnique({ where: { id: agent.currentVersionId }, select: { seq: true } })
      : null;
    if (current && current.seq > version.seq) return agent.status;
    const status = agent.currentVersionId === null || agent.status === "deploying" ? "active" : agent.status;
    await tx.agent.update({
      where: { id: agent.id },
      data: {
        status,
        statusError: DbNull,
        currentVersionId: version.id,
        capabilities: declaredCapabilities(manifest),
        triggerDelegationId: version.triggerDelegationId,
        description: manifest.description ?? null,
        passportId: manifest.passport ?? null,
      },
    });
    await syncAgentTriggers(tx, agent.id);
    const about = { agent_id: agent.id, name: agent.name, version: version.version, status };
    await putPlatformEvent(tx, undefined, agent.orgDid, { type: "agent.deployed", payload: about });
    if (status === "active" && agent.status !== "active")
      await putPlatformEvent(tx, undefined, agent.orgDid, { type: "agent.activated", payload: about });
    return status;
  }
  const error = { code: outcome.error.code, message: outcome.error.message };
  await tx.agentVersion.update({ where: { id: versionId }, data: { status: "rejected", error } });
  if (agent.currentVersionId === null) {
    await tx.agent.update({ where: { id: agent.id }, data: { status: "inactive", statusError: error } });
    return "inactive";
  }
  return agent.status;
}
