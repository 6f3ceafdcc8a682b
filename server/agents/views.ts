import type { Agent, AgentVersion } from "../db/generated/sqlite/client";

type VersionRow = Omit<AgentVersion, "bundle" | "manifest"> & { bundle?: unknown; manifest?: unknown };

/** The Agent shape of a row. */
export function agentView(a: Agent) {
  return {
    id: a.id,
    name: a.name,
    capabilities: a.capabilities as string[],
    owner_org_passport_id: a.orgDid,
    status: a.status as "active" | "inactive" | "deploying",
    description: a.description,
    passport_id: a.passportId,
  };
}

export function versionSummary(v: VersionRow) {
  return {
    seq: v.seq,
    version: v.version,
    status: v.status as "deploying" | "ready" | "rejected",
    bundle_hash: v.bundleHash,
    limits: { memory_mb: v.memoryMb, timeout_ms: v.timeoutMs },
    error: (v.error as { code: string; message: string } | null) ?? null,
    deployed_at: v.deployedAt?.toISOString() ?? null,
    created_at: v.createdAt.toISOString(),
  };
}

/** AgentStatusResponse: the agent, its current version's runtime, and its deploys (newest first). */
export function agentStatusView(a: Agent, versions: VersionRow[]) {
  const current = versions.find((v) => v.id === a.currentVersionId);
  const latest = versions[0];
  return {
    data: {
      ...agentView(a),
      description: a.description,
      passport_id: a.passportId,
      version: current?.version ?? null,
      runtime: {
        engine: "quickjs-wasm" as const,
        limits: current ? { memory_mb: current.memoryMb, timeout_ms: current.timeoutMs } : null,
        bundle_hash: current?.bundleHash ?? null,
        deployed_at: current?.deployedAt?.toISOString() ?? null,
        error: (a.statusError as { code: string; message: string } | null) ?? null,
        last_deploy: latest ? versionSummary(latest) : null,
        versions: versions.map(versionSummary),
      },
      updated_at: a.updatedAt.toISOString(),
    },
  };
}
