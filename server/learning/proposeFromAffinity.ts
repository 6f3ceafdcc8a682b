import type { Database } from "../db/client";
import { servicePrincipal } from "../events/platformEvents";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { learningApplier } from "./appliers";
import { createProposal } from "./createProposal";
import { linkProposalRecord } from "./linkProposalRecord";
import { affinityWindowRef } from "./schemas";

/** One prompt × model row of the affinity report (the spec's PromptAffinityResponse item). */
export interface AffinityRow {
  prompt_key: string;
  model_id: string;
  sample_size: number;
  affinity_score: number;
}

/** Where the worker reads affinity from: the prompts area's computation (server/prompts/), or a test's. */
export type AffinitySource = (
  db: Database,
  orgDid: string,
  window: { from: Date; to: Date },
) => Promise<readonly AffinityRow[]>;

/** The thresholds of the worker's own proposals (README, "Learning proposals"). */
export interface SweepSettings {
  /** How far back the statistics reach (SVC_LEARNING_WINDOW_DAYS, default 14). */
  windowMs: number;
  /** A model needs at least this many recorded calls of the prompt (SVC_LEARNING_MIN_SAMPLES, default 20). */
  minSamples: number;
  /** …and an affinity score at least this far above the recommended model's (SVC_LEARNING_MARGIN, default 0.1). */
  margin: number;
}

/** A worker threshold from the environment: a finite number ≥ 0, else `fallback`. */
export function settingNumber(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isFinite(v) && v >= 0 ? v : fallback;
}

export function sweepSettings(): SweepSettings {
  const num = settingNumber;
  return {
    windowMs: num("SVC_LEARNING_WINDOW_DAYS", 14) * 86_400_000,
    minSamples: Math.max(1, Math.floor(num("SVC_LEARNING_MIN_SAMPLES", 20))),
    margin: num("SVC_LEARNING_MARGIN", 0.1),
  };
}

/** Open proposals: a target has at most one of the worker's kind pending or approved at a time. */
const OPEN = ["pending", "approved"];

/**
 * The worker's own proposals: for each prompt of each organization with recorded prompt calls in the
 * window, the model with the best affinity score (at least `minSamples` calls) is proposed as the
 * prompt's recommended model when it beats the current recommendation's score (0 when the
 * recommended model has no calls in the window, or there is none) by at least `margin`. The
 * proposal is `source: inferred`, with confidence = min(1, gap / (2 × margin)) × n / (n + minSamples)
 * (n: the winner's sample size) and the window of each compared model as evidence. A target with
 * an open proposal (pending or approved) gets none. Each proposal is its own transaction with a
 * provenance record whose actor is the organization (the service acting for it). Returns how many
 * it made.
 */
export async function proposeFromAffinity(
  db: Database,
  source: AffinitySource,
  settings: SweepSettings = sweepSettings(),
  now = new Date(),
): Promise<number> {
  const applier = learningApplier("prompt_recommended_model");
  if (!applier) return 0;
  const from = new Date(now.getTime() - settings.windowMs);
  // The organizations with completed prompted calls in the window, from the daily rollup (its
  // rows are organizations × prompts × models × days, not calls); the window's first day is read
  // whole, so this may name one with nothing in the window, whose report is then empty.
  const orgs = await db.read.promptCallRollup.groupBy({
    by: ["orgDid"],
    where: { day: { gte: from.toISOString().slice(0, 10), lte: now.toISOString().slice(0, 10) } },
  });
  let made = 0;
  for (const { orgDid } of orgs) {
    const rows = await source(db, orgDid, { from, to: now });
    const byPrompt = new Map<string, AffinityRow[]>();
    for (const r of rows) byPrompt.set(r.prompt_key, [...(byPrompt.get(r.prompt_key) ?? []), r]);
    for (const [key, models] of byPrompt) {
      const eligible = models.filter((m) => m.sample_size >= settings.minSamples);
      if (eligible.length === 0) continue;
      const best = eligible.reduce((a, b) => (b.affinity_score > a.affinity_score ? b : a));
      made += await db.writeTx(async (tx) => {
        const open = await tx.learningProposal.count({
          where: { orgDid, kind: "prompt_recommended_model", target: key, approvalState: { in: OPEN } },
        });
        if (open > 0) return 0;
        const got = (await applier.current(tx, orgDid, key)).recommended_model;
        const current = typeof got === "string" ? got : null;
        if (current === best.model_id) return 0;
        const baseline = models.find((m) => m.model_id === current)?.affinity_score ?? 0;
        const gap = best.affinity_score - baseline;
        if (gap < settings.margin) return 0;
        const confidence =
          Math.min(1, gap / (2 * Math.max(settings.margin, 1e-9))) *
          (best.sample_size / (best.sample_size + settings.minSamples));
        const compared = models.filter((m) => m.model_id === best.model_id || m.model_id === current);
        const principal = servicePrincipal(orgDid);
        const proposal = await createProposal(
          tx,
          principal,
          {
            kind: "prompt_recommended_model",
            target: key,
            proposed: { recommended_model: best.model_id },
            explain: {
              source: "inferred",
              scope: `prompt:${key}`,
              confidence: Math.round(confidence * 1000) / 1000,
              evidence_refs: compared.map((m) => affinityWindowRef(key, m.model_id, from, now)),
              rollback_target: current ?? "none",
            },
          },
          { origin: "worker", now },
        );
        const record = await appendServiceRecord(tx, db.engine, {
          org_did: orgDid,
          grantor_did: null,
          capability: null,
          operation: "LEARNING_PROPOSE affinity",
          resource_type: "learning_proposal",
          resource_id: proposal.id,
          decision: "allowed",
          status: 201,
          request_hash: requestHash({ kind: proposal.kind, target: key, proposed: proposal.proposed }),
        });
        await linkProposalRecord(tx, proposal, record.id);
        return 1;
      });
    }
  }
  return made;
}
