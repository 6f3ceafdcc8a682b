import { database } from "../db/client";
import { finishJob, WorkerLost, type JobKind } from "../jobs";
import { checkVersion, DEPLOY_JOB, recordDeployOutcome } from "./deployAgent";

/** The agents area's background work: loading a deployed bundle in the sandbox (`agent.deploy`). */
const deployJob: JobKind<{ versionId: string }> = {
  concurrency: 2,
  async handler(job) {
    const db = await database();
    const version = await db.read.agentVersion.findUnique({ where: { id: job.payload.versionId } });
    if (!version || version.status !== "deploying") return;
    const outcome = await checkVersion(version);
    // A crashed thread says nothing about the bundle: try again rather than reject it.
    if (!outcome.ok && outcome.error.code === "internal") throw new Error(outcome.error.message);
    await db.writeTx(async (tx) => {
      await recordDeployOutcome(tx, version.id, outcome);
      await finishJob(tx, job);
    });
  },
  // Its attempts ran out (the check kept crashing, or its worker was lost): the version is rejected,
  // and a first deploy leaves the agent inactive, rather than both staying `deploying`.
  async onExhausted(tx, job, error) {
    const lost = error instanceof WorkerLost;
    await recordDeployOutcome(tx, job.payload.versionId, {
      ok: false,
      error: {
        code: lost ? "worker_lost" : "internal",
        message: lost
          ? "The worker loading the bundle stopped before it ended."
          : "Loading the bundle failed on every attempt with an internal error of the service.",
      },
    });
  },
};

export const agentJobKinds = { [DEPLOY_JOB]: deployJob as JobKind };
