import type { z } from "zod";
import { rootOrgDidOf } from "../setup/rootOrg";
import type { Database } from "../db/client";
import { latestCheckpoint } from "../ledger/proofs";
import type { WalledGardenStatus } from "./schemas";
import { latestCosignatures } from "./witnesses";

/** How recent a cosignature must be to count as network verification (seconds). */
const maxAge = () => Number(process.env.SVC_WITNESS_MAX_AGE_SECONDS || 3600);

/**
 * Whether anyone outside the operator has vouched for the ledger: `network_verified` once a
 * configured witness has cosigned a recent checkpoint, `local_only` otherwise. The texts describe
 * the actual situation: which witnesses exist, which cosigned what and when.
 */
export async function walledGardenStatus(db: Database, orgDid: string): Promise<z.input<typeof WalledGardenStatus>> {
  const rootDid = await rootOrgDidOf(db);
  // Witness addresses are the operator's infrastructure: tenants see names and cosignatures only.
  const showUrls = rootDid === orgDid;
  const witnesses = await latestCosignatures(db);
  const latest = await latestCheckpoint(db);
  const now = Date.now();
  const fresh = witnesses.filter(
    (w) => w.cosignature && now - new Date(w.cosignature.signed_at).getTime() <= maxAge() * 1000,
  );
  const stale = witnesses.filter((w) => w.cosignature && !fresh.includes(w));
  const silent = witnesses.filter((w) => !w.cosignature);
  const verified = fresh.length > 0;
  const size = latest?.treeSize ?? 0;
  const newestCosigned = Math.max(0, ...fresh.map((w) => w.cosignature!.tree_size));

  const explanation = verified
    ? `${fresh.length} of ${witnesses.length} configured witness(es) (${fresh.map((w) => w.witness.name).join(", ")}) cosigned a checkpoint in the last ${maxAge()} s, the newest covering ${newestCosigned} of ${size} checkpointed records. A witness only cosigns a checkpoint consistent with every one it saw before, so the operator cannot show different histories to different auditors without a witness noticing.`
    : witnesses.length === 0
      ? `No witness is configured (SVC_WITNESSES), so the ledger's ${size} checkpointed records are vouched for only by this service's own signature. An auditor can check that records match the signed checkpoints, but not that the operator shows everyone the same checkpoints.`
      : `${witnesses.length} witness(es) are configured but none cosigned a checkpoint in the last ${maxAge()} s${stale.length ? ` (last cosignatures: ${stale.map((w) => `${w.witness.name} at ${w.cosignature!.signed_at}`).join(", ")})` : ""}${silent.length ? `; never cosigned: ${silent.map((w) => w.witness.name).join(", ")}` : ""}. Until one does, the ledger is verified only by this service.`;

  const mitigations = [
    "Provenance records, tree nodes and checkpoints are append-only at the database level (triggers refuse UPDATE and DELETE).",
    "Every checkpoint is signed with the service's Ed25519 key; `npx svc verify` checks exports, checkpoints and proofs offline with only the public verifier key.",
    "Checkpoints are issued only for trees that extend the previous one; consistency proofs between any two are served at /v1/provenance/consistency.",
  ];
  if (verified)
    mitigations.push(
      `Witness cosignatures from ${fresh.map((w) => w.witness.name).join(", ")} are stored and verified against the witnesses' keys.`,
    );

  const recommendations: string[] = [];
  if (witnesses.length === 0)
    recommendations.push(
      "Configure at least one independent witness in SVC_WITNESSES (<witness verifier key>@<url>) so that checkpoints are cosigned outside this deployment.",
    );
  if (witnesses.length === 1)
    recommendations.push("Add a second, independently operated witness: one witness can collude or go offline.");
  for (const w of silent)
    recommendations.push(
      `Witness ${w.witness.name}${showUrls ? ` (${w.witness.url})` : ""} has never cosigned: check that it is reachable and knows this log's origin and key.`,
    );
  for (const w of stale)
    recommendations.push(
      `Witness ${w.witness.name} last cosigned at ${w.cosignature!.signed_at}: check that it is reachable.`,
    );
  recommendations.push(
    "Auditors: save checkpoints as you see them and verify consistency between the ones you hold (GET /v1/provenance/consistency).",
  );

  return {
    network_verification: verified ? "network_verified" : "local_only",
    explanation,
    mitigations,
    risks: {
      walled_garden_possible: !verified,
      blast_radius: verified
        ? "Limited: a forked or rewritten history would have to be cosigned by the witnesses, which refuse checkpoints inconsistent with what they saw."
        : `The whole ledger (${size} checkpointed records): an operator with database and key access could present a rewritten history to an auditor who holds no earlier checkpoint.`,
      risk_acceptance: verified
        ? "Residual: witnesses are trusted not to collude with the operator."
        : "Accepted only while auditors keep their own copies of checkpoints; configure witnesses to remove it.",
    },
    recommendations,
    witnesses: witnesses.map((w) => ({
      name: w.witness.name,
      url: showUrls ? w.witness.url : "(hidden)",
      last_cosignature: w.cosignature ? { witness: w.witness.name, ...w.cosignature } : null,
    })),
  };
}
