import type { Database, Db } from "../db/client";
import { sqlIn } from "../db/client";
import type { Batcher } from "../db/groupCommit";
import { sqliteTimestamp } from "../db/raw";
import type { ClaimedJob } from "../jobs";

/**
 * The row-level SQL of a run (runExecution.ts tells the story): each statement the run sends on
 * its common path, as raw SQL through the driver or the write transaction's own connection
 * (`sqlIn`), since a run's statements are counted (tests/integration/statementCounts.test.ts).
 * Every move is conditional: on the execution not having ended and on its delegation chain being
 * live (`chainLive`), so a cancel or a revocation that commits meanwhile wins.
 */

export type ChainEnd = "delegation_revoked" | "delegation_expired";

export const at = (engine: Database["engine"], d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);
const jsonParam = (engine: Database["engine"], n: number) => (engine === "postgresql" ? `$${n}::jsonb` : `$${n}`);
// SQLite keeps timestamps as text; node-postgres answers a Date.
const dateOf = (v: unknown): Date | null => {
  if (v === null || v === undefined) return null;
  const d = v instanceof Date ? v : new Date(v as string);
  return Number.isNaN(d.getTime()) ? null : d;
};

/** What a run needs of its execution, its version and its delegation, read in one query. */
export interface Run {
  id: string;
  orgDid: string;
  agentId: string;
  delegationId: string;
  requesterPassportId: string;
  callbackUrl: string | null;
  status: string;
  /** Whether an earlier attempt started (and may have logged lines). */
  startedBefore: boolean;
  maxAttempts: number;
  input: unknown;
  bundle: Buffer;
  memoryMb: number;
  timeoutMs: number;
  /** The actor of the run's record: the agent's passport (or the organization). */
  delegateDid: string;
  /** The run's delegation and every one it derives from, root first. */
  chain: string[];
  /** When the run's own delegation expires (what derives from a delegation expires no later than it). */
  expiresAt: Date | null;
}

/** The run's execution, version and delegation, in one query. */
export async function loadRun(db: Database, id: string): Promise<Run | undefined> {
  const [r] = await db.raw.query<Record<string, unknown>>(
    `SELECT e."id", e."org_did", e."agent_id", e."delegation_id", e."requester_passport_id", e."callback_url", e."status", e."started_at",
            e."max_attempts", e."input", v."bundle", v."memory_mb", v."timeout_ms", d."delegate_did", d."ancestry", d."expires_at"
       FROM "async_execution" e JOIN "agent_version" v ON v."id" = e."agent_version_id" JOIN "delegation" d ON d."id" = e."delegation_id"
      WHERE e."id" = $1`,
    [id],
  );
  if (!r) return undefined;
  // SQLite keeps Prisma's Json as text; node-postgres parses jsonb itself.
  const input =
    db.engine === "sqlite" && typeof r.input === "string" ? (JSON.parse(r.input) as unknown) : (r.input ?? null);
  return {
    id,
    orgDid: r.org_did as string,
    agentId: r.agent_id as string,
    delegationId: r.delegation_id as string,
    requesterPassportId: r.requester_passport_id as string,
    callbackUrl: (r.callback_url as string | null) ?? null,
    status: r.status as string,
    startedBefore: r.started_at !== null,
    maxAttempts: Number(r.max_attempts),
    input,
    bundle: Buffer.from(r.bundle as Uint8Array),
    memoryMb: Number(r.memory_mb),
    timeoutMs: Number(r.timeout_ms),
    delegateDid: r.delegate_did as string,
    chain: [...(r.ancestry as string).split(" ").filter(Boolean), r.delegation_id as string],
    expiresAt: dateOf(r.expires_at),
  };
}

/**
 * How a run's chain stands, as one SQL expression, the only place the rule is written: 2 when a
 * delegation of it was revoked (revocation wins), 1 when one has expired at `now`, else 0. The
 * chain's ids are parameters from `$first` on.
 */
function chainEndSql(chain: string[], first: number, now: string): string {
  const ids = chain.map((_, i) => `$${first + i}`).join(",");
  return `COALESCE((SELECT MAX(CASE WHEN "revoked_at" IS NOT NULL THEN 2 WHEN "expires_at" <= ${now} THEN 1 ELSE 0 END) FROM "delegation" WHERE "id" IN (${ids})), 0)`;
}

/** The condition of a move that needs the chain live (`chainEndSql` is 0). */
const chainLive = (chain: string[], first: number, now: string) => `${chainEndSql(chain, first, now)} = 0`;

/** `chainEndSql`'s answer as the reason a run ends. */
export function chainEndOf(value: unknown): ChainEnd | undefined {
  const n = Number(value);
  return n === 2 ? "delegation_revoked" : n === 1 ? "delegation_expired" : undefined;
}

/**
 * The starts of a group: one UPDATE each (each run's own chain), then one INSERT of the first
 * attempts of those that moved (a later attempt is opened after, by `openAttempt`). Conditional
 * moves only: safe to apply again alone if the batch fails. Answers whether each run moved.
 */
export const runStarts: Batcher<{ job: ClaimedJob; run: Run }, boolean> = {
  name: "execution.start",
  async apply(q, engine, items) {
    const now = at(engine, new Date());
    const moved: boolean[] = [];
    for (const { job, run } of items) {
      const n = await q.execute(
        `UPDATE "async_execution" SET "status" = 'processing', "current_attempt" = $2, "started_at" = COALESCE("started_at", $3), "updated_at" = $3
          WHERE "id" = $1 AND "status" IN ('queued', 'processing') AND ${chainLive(run.chain, 4, "$3")}`,
        [run.id, job.attempts, now, ...run.chain],
      );
      moved.push(n > 0);
    }
    const firsts = items.filter(({ job }, i) => moved[i] && job.attempts === 1);
    if (firsts.length > 0) {
      const values = firsts.map((_, i) => `($${i * 3 + 2},$${i * 3 + 3},1,$${i * 3 + 4},'running',$1)`);
      await q.execute(
        `INSERT INTO "execution_attempt" ("id","execution_id","attempt","worker_id","status","started_at") VALUES ${values.join(",")}
           ON CONFLICT ("execution_id","attempt") DO NOTHING`,
        [now, ...firsts.flatMap(({ job, run }) => [`${run.id}:1`, run.id, job.workerId])],
      );
    }
    return moved;
  },
};

/** processing → queued for another attempt, keeping the error; false if it moved nothing. */
export async function requeueRun(tx: Db, engine: Database["engine"], run: Run, error: object): Promise<boolean> {
  const now = at(engine, new Date());
  const moved = await sqlIn(tx, engine).execute(
    `UPDATE "async_execution" SET "status" = 'queued', "error_json" = ${jsonParam(engine, 2)}, "updated_at" = $3
        WHERE "id" = $1 AND "status" IN ('processing', 'queued') AND ${chainLive(run.chain, 4, "$3")}`,
    [run.id, JSON.stringify(error), now, ...run.chain],
  );
  return moved > 0;
}

/** Whether a delegation of the chain was revoked, else whether one has expired. */
export async function chainEnded(tx: Db, engine: Database["engine"], chain: string[]): Promise<ChainEnd | undefined> {
  const [row] = await sqlIn(tx, engine).query<{ chain_end: unknown }>(
    `SELECT ${chainEndSql(chain, 2, "$1")} AS "chain_end"`,
    [at(engine, new Date()), ...chain],
  );
  return chainEndOf(row?.chain_end);
}

/** The run's progress, while it still runs. */
export async function writeProgress(
  db: Database,
  run: Pick<Run, "id">,
  progress: { percent: number; message: string | null },
): Promise<void> {
  await db.raw.execute(
    `UPDATE "async_execution" SET "progress_percent" = $2, "progress_message" = $3, "updated_at" = $4 WHERE "id" = $1 AND "status" = 'processing'`,
    [run.id, progress.percent, progress.message, new Date()],
  );
}

/** Log lines of one attempt, in one INSERT; each line's id is the execution's and its seq. */
export async function insertLogLines(
  db: Database,
  run: Pick<Run, "id">,
  attempt: number,
  lines: ReadonlyArray<{ seq: number; level: string; line: string; at: Date }>,
): Promise<void> {
  const values = lines.map((_, i) => `(${[1, 2, 3, 4, 5, 6, 7].map((k) => `$${i * 7 + k}`).join(",")})`).join(",");
  await db.raw.execute(
    `INSERT INTO "execution_log" ("id","execution_id","seq","level","line","created_at","attempt") VALUES ${values}`,
    lines.flatMap((l) => [`${run.id}:${l.seq}`, run.id, l.seq, l.level, l.line, l.at, attempt]),
  );
}

/** processing → completed | failed, pointing at its record to be; false if it moved nothing. */
export async function moveRunToEnd(
  tx: Db,
  engine: Database["engine"],
  run: Pick<Run, "id" | "chain">,
  status: "completed" | "failed",
  end: { result?: object; error?: object },
  provenanceId: string,
): Promise<boolean> {
  const now = at(engine, new Date());
  const set =
    status === "completed"
      ? `"result_json" = ${jsonParam(engine, 4)}, "error_json" = NULL, "progress_percent" = 100`
      : `"error_json" = ${jsonParam(engine, 4)}`;
  const moved = await sqlIn(tx, engine).execute(
    `UPDATE "async_execution" SET "status" = $2, ${set}, "completed_at" = $3, "updated_at" = $3, "provenance_id" = $5
        WHERE "id" = $1 AND "status" IN ('processing', 'queued') AND ${chainLive(run.chain, 6, "$3")}`,
    [run.id, status, now, JSON.stringify(status === "completed" ? end.result : end.error), provenanceId, ...run.chain],
  );
  return moved > 0;
}

/**
 * Why a running run must stop, if it must: the code its execution was cancelled with, or how its
 * chain ended; undefined while it may go on. One raw read.
 */
export async function readStopReason(db: Database, run: Pick<Run, "id" | "chain">): Promise<string | undefined> {
  const [now] = await db.raw.query<{ status: string; error_json: unknown; chain_end: number | null }>(
    `SELECT e."status", e."error_json", ${chainEndSql(run.chain, 3, "$2")} AS "chain_end"
       FROM "async_execution" e WHERE e."id" = $1`,
    [run.id, new Date(), ...run.chain],
  );
  if (!now) return undefined;
  if (now.status === "cancelled") {
    const error = typeof now.error_json === "string" ? (JSON.parse(now.error_json) as unknown) : now.error_json;
    return (error as { code?: string } | null)?.code ?? "cancelled";
  }
  return chainEndOf(now.chain_end);
}
