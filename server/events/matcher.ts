import { afterCommit, type Database, type Db, sqlIn } from "../db/client";
import { newId } from "../ids";
import { processWide } from "../processWide";

/**
 * The in-memory index the bus matches events against: per organization, a map from exact type to
 * subscriptions and a trie of `prefix.*` patterns keyed by dot segments. Matching a type of k
 * segments costs one map lookup plus at most k trie steps, whatever the number of subscriptions.
 *
 * It is rebuilt from the database when the subscription table changes, in this process or in
 * another: every write to subscriptions calls `subscriptionsChanged(tx)`, which stores a fresh
 * token in `service_state`; the fingerprint (that token, the table's row count and latest
 * `updated_at`, so a writer that forgets the token is still noticed) is read at most every
 * REFRESH_MS when matching. Another process therefore sees a new subscription within
 * REFRESH_MS plus one rebuild. Removals need no wait: the bus re-reads the matched rows in its
 * transaction and drops any no longer active (see `matchEvent`).
 */
const REFRESH_MS = 250;
const VERSION_KEY = "events.subscriptions.version";

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Subscriptions whose pattern is the path to this node followed by `.*`. */
  subs: string[];
}
interface OrgIndex {
  exact: Map<string, string[]>;
  prefix: TrieNode;
}

const node = (): TrieNode => ({ children: new Map(), subs: [] });

export class SubscriptionIndex {
  private orgs = new Map<string, OrgIndex>();
  private fingerprint: string | null = null;
  private checkedAt = 0;
  private stale = true;
  private size = 0;

  /** Adds one subscription's patterns (the bench builds indexes without a database this way). */
  add(orgDid: string, subscriptionId: string, patterns: readonly string[]): void {
    let org = this.orgs.get(orgDid);
    if (!org) this.orgs.set(orgDid, (org = { exact: new Map(), prefix: node() }));
    for (const pattern of patterns) {
      if (pattern.endsWith(".*")) {
        let at = org.prefix;
        for (const segment of pattern.slice(0, -2).split(".")) {
          let next = at.children.get(segment);
          if (!next) at.children.set(segment, (next = node()));
          at = next;
        }
        if (!at.subs.includes(subscriptionId)) at.subs.push(subscriptionId);
      } else {
        const list = org.exact.get(pattern);
        if (!list) org.exact.set(pattern, [subscriptionId]);
        else if (!list.includes(subscriptionId)) list.push(subscriptionId);
      }
    }
    this.size++;
  }

  /** The subscriptions of the organization one of whose patterns matches `type` (each once). */
  match(orgDid: string, type: string): string[] {
    const org = this.orgs.get(orgDid);
    if (!org) return [];
    const found = new Set(org.exact.get(type) ?? []);
    const segments = type.split(".");
    let at: TrieNode | undefined = org.prefix;
    // `a.*` matches a.b and a.b.c but not a: stop before the last segment.
    for (let i = 0; i < segments.length - 1 && at; i++) {
      at = at.children.get(segments[i]!);
      if (at) for (const id of at.subs) found.add(id);
    }
    return [...found];
  }

  get subscriptionCount(): number {
    return this.size;
  }

  /** Forces a fingerprint check at the next `refresh` (after a write in this process). */
  invalidate(): void {
    this.stale = true;
  }

  /**
   * Rebuilds the index when the subscription table changed since the last look (checked at most
   * every REFRESH_MS). Concurrent callers wait for the one look in flight: matching against the
   * index it is replacing (empty, in a fresh process) would silently match nothing.
   */
  async refresh(db: Db, engine: Database["engine"]): Promise<void> {
    while (this.inflight) await this.inflight.catch(() => undefined);
    if (!this.stale && Date.now() - this.checkedAt < REFRESH_MS) return;
    const look = this.look(db, engine);
    this.inflight = look;
    try {
      await look;
    } finally {
      this.inflight = undefined;
    }
  }

  private inflight: Promise<void> | undefined;

  private async look(db: Db, engine: Database["engine"]): Promise<void> {
    // A write in this process while we look marks the index stale again for the next caller.
    this.stale = false;
    const fp = await fingerprintOf(db, engine);
    this.checkedAt = Date.now();
    if (fp === this.fingerprint) return;
    const rows = await db.subscription.findMany({
      where: { status: "active" },
      select: { id: true, orgDid: true, eventTypes: true },
    });
    const previous = { orgs: this.orgs, size: this.size };
    this.orgs = new Map();
    this.size = 0;
    try {
      for (const r of rows) this.add(r.orgDid, r.id, r.eventTypes as string[]);
    } catch (e) {
      Object.assign(this, previous);
      throw e;
    }
    this.fingerprint = fp;
  }
}

/**
 * What the index was built from: the version every subscription write bumps, and the table's size
 * and newest change (which also catch a write that bypassed `subscriptionsChanged`). One raw
 * statement (in the caller's transaction when it has one): it runs on the run-end and ingest paths.
 */
async function fingerprintOf(db: Db, engine: Database["engine"]): Promise<string> {
  const text = (sql: string) => (engine === "postgresql" ? `${sql}::text` : `CAST(${sql} AS TEXT)`);
  const [row] = await sqlIn(db, engine).query<{ v: string | null; n: string; m: string | null }>(
    `SELECT (SELECT "value" FROM "service_state" WHERE "key" = $1) AS "v", ${text("COUNT(*)")} AS "n", ${text(`MAX("updated_at")`)} AS "m" FROM "subscription"`,
    [VERSION_KEY],
  );
  return `${row?.v ?? ""}|${row?.n ?? "0"}|${row?.m ?? ""}`;
}

/** The process's index. */
export const subscriptionIndex = processWide("events.subscriptionIndex", () => new SubscriptionIndex());

/** Call in the transaction of every write to `subscription`: every process's index rebuilds at its next match. */
export async function subscriptionsChanged(tx: Db): Promise<void> {
  const value = newId("ver");
  await tx.serviceState.upsert({ where: { key: VERSION_KEY }, create: { key: VERSION_KEY, value }, update: { value } });
  subscriptionIndex.invalidate();
  // Again once it commits: a look by a concurrent transaction meanwhile could not see this write yet.
  afterCommit(tx, () => subscriptionIndex.invalidate());
}
