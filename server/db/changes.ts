import { config } from "../config";
import { processWide } from "../processWide";
import { afterCommit, database, type Db } from "./client";
import { logger } from "../telemetry/log";

/**
 * Change notifications: a service that wrote something a live view shows says so with
 * `notifyChange(tx, …)`; once its transaction commits (never if it rolls back) every process's
 * subscribers of that channel hear it. On PostgreSQL they travel by `NOTIFY` on one channel,
 * `svc_changes`, to every process that `LISTEN`s (the web process serves the streams, workers run
 * the executions); on SQLite the process is the only writer, so they stay in memory.
 *
 * A notification carries no data, only what changed (`channel`, organization, id): a subscriber
 * reads the current state itself, under its own caller's authority. Spurious notifications are
 * harmless; several for the same row within a tick travel as one.
 */
export interface Change {
  /** What kind of thing changed, e.g. `executions`, `webhooks`. */
  channel: string;
  /** The organization that owns it: a subscriber only hears its own. */
  org: string;
  /** The changed row's id (an execution, a webhook). */
  id: string;
}

type Listener = (change: Change) => void;

const PG_CHANNEL = "svc_changes";
// NOTIFY payloads are limited to 8,000 bytes: batches are cut below that.
const PG_PAYLOAD_BYTES = 7_000;

interface ChangeState {
  listeners: Map<string, Set<Listener>>;
  pending: Map<string, Change>;
  flushing: boolean;
  /** The subscribers to tell when changes may have been missed (the LISTEN connection came back). */
  resync: Set<() => void>;
  pg?: { client?: import("pg").Client; ready: Promise<void> };
  /** The LISTEN connection was lost: when it is back, subscribers resync. */
  missed: boolean;
  reconnecting: boolean;
  reconnectMs: number;
  /**
   * Replaced by closeChanges: a reconnect scheduled before it does nothing. An object compared by
   * identity, not a counter: state put back as new (tests/integration/setup.ts between files) gets
   * a fresh one that no reconnect scheduled earlier holds, where a counter would start again at 0.
   */
  generation: object;
}

// One hub per process, whichever copy of this module (Next.js bundles its own) notifies or subscribes.
const state = processWide<ChangeState>("db.changes", () => ({
  listeners: new Map(),
  pending: new Map(),
  flushing: false,
  resync: new Set(),
  missed: false,
  reconnecting: false,
  reconnectMs: 250,
  generation: {},
}));

const keyOf = (c: Change) => `${c.channel}\u0000${c.org}\u0000${c.id}`;

/** Announces, once `tx` commits, that `change.id` changed; outside a transaction, on the next tick. */
export function notifyChange(tx: Db, change: Change): void {
  afterCommit(tx, () => publish(change));
}

/** Announces a change that is already committed (written outside a transaction). */
export function publish(change: Change): void {
  state.pending.set(keyOf(change), change);
  if (state.flushing) return;
  state.flushing = true;
  // Coalesced per tick: a burst of progress updates for one execution travels once.
  setImmediate(() => void flush());
}

async function flush(): Promise<void> {
  const batch = [...state.pending.values()];
  state.pending.clear();
  state.flushing = false;
  if (batch.length === 0) return;
  if (config().engine !== "postgresql") {
    deliver(batch);
    return;
  }
  try {
    const db = await database();
    for (const payload of payloads(batch)) await db.raw.execute("SELECT pg_notify($1, $2)", [PG_CHANNEL, payload]);
  } catch (e) {
    // A live view misses an update (it still shows the state at its next change); the write stands.
    logger().error(`a change notification was not sent: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function payloads(batch: Change[]): string[] {
  const out: string[] = [];
  let current: Array<[string, string, string]> = [];
  let size = 2;
  for (const c of batch) {
    const entry: [string, string, string] = [c.channel, c.org, c.id];
    const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (current.length > 0 && size + bytes > PG_PAYLOAD_BYTES) {
      out.push(JSON.stringify(current));
      current = [];
      size = 2;
    }
    current.push(entry);
    size += bytes;
  }
  if (current.length > 0) out.push(JSON.stringify(current));
  return out;
}

function deliver(batch: Change[]): void {
  for (const change of batch) {
    for (const listener of state.listeners.get(change.channel) ?? []) {
      try {
        listener(change);
      } catch (e) {
        logger().error(`a change listener failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}

/**
 * Calls `listener` for every committed change on `channel`, from any process on PostgreSQL;
 * resolves once listening (a change committed after that is heard). `onResync` is called when
 * changes may have been missed (the LISTEN connection was lost and is back): the subscriber reads
 * its state again. Returns the way to stop.
 */
export async function subscribeChanges(
  channel: string,
  listener: Listener,
  onResync?: () => void,
): Promise<() => void> {
  let set = state.listeners.get(channel);
  if (!set) state.listeners.set(channel, (set = new Set()));
  set.add(listener);
  if (onResync) state.resync.add(onResync);
  const stop = () => {
    set.delete(listener);
    if (onResync) state.resync.delete(onResync);
  };
  if (config().engine === "postgresql") {
    try {
      await listening();
    } catch (e) {
      stop();
      throw e;
    }
  }
  return stop;
}

/** The first wait before reopening a lost LISTEN connection, and the most it grows to. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 15_000;

/**
 * This process's one LISTEN connection, opened on first use. Lost (PostgreSQL restarted, the
 * backend terminated), it is reopened with backoff for as long as the process lives, however long
 * the outage; once it is back every subscriber is told to resync, since whatever committed while
 * nobody listened was not heard (a stream would otherwise show the old state as current).
 */
function listening(): Promise<void> {
  if (state.pg) return state.pg.ready;
  const generation = state.generation;
  const open = async (): Promise<import("pg").Client> => {
    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: config().databaseUrl });
    client.on("notification", (msg) => {
      if (msg.channel !== PG_CHANNEL || !msg.payload) return;
      try {
        const entries = JSON.parse(msg.payload) as Array<[string, string, string]>;
        deliver(entries.map(([channel, org, id]) => ({ channel, org, id })));
      } catch {
        // Not ours: ignore.
      }
    });
    const lost = (why: string) => {
      client.end().catch(() => undefined);
      if (state.pg?.client !== client) return;
      logger().error(`the change-notification connection was lost (${why}); reopening`);
      state.pg = undefined;
      state.missed = true;
      reconnectLater(generation);
    };
    client.on("error", (e) => lost(e.message));
    client.on("end", () => lost("closed"));
    try {
      await client.connect();
      await client.query(`LISTEN ${PG_CHANNEL}`);
    } catch (e) {
      client.end().catch(() => undefined);
      throw e;
    }
    return client;
  };
  const entry: { client?: import("pg").Client; ready: Promise<void> } = { ready: Promise.resolve() };
  entry.ready = open().then(
    (client) => {
      if (state.pg !== entry || generation !== state.generation) {
        client.end().catch(() => undefined);
        return;
      }
      entry.client = client;
      state.reconnectMs = RECONNECT_FIRST_MS;
      if (state.missed) {
        state.missed = false;
        logger().info("the change-notification connection is back; live views resync");
        for (const resync of state.resync) resync();
      }
    },
    (e: unknown) => {
      if (state.pg === entry) state.pg = undefined;
      if (state.missed || state.resync.size > 0) {
        state.missed = true;
        reconnectLater(generation);
      }
      throw e;
    },
  );
  state.pg = entry;
  return entry.ready;
}

/** Reopens the LISTEN connection after the current backoff (doubling, with jitter, up to the cap). */
function reconnectLater(generation: object): void {
  if (state.reconnecting || generation !== state.generation) return;
  state.reconnecting = true;
  const wait = state.reconnectMs / 2 + Math.random() * (state.reconnectMs / 2);
  state.reconnectMs = Math.min(state.reconnectMs * 2, RECONNECT_MAX_MS);
  setTimeout(() => {
    state.reconnecting = false;
    if (generation === state.generation) void listening().catch(() => undefined);
  }, wait).unref();
}

/** Closes the LISTEN connection (tests, shutdown); it is not reopened until the next subscription. */
export async function closeChanges(): Promise<void> {
  const pg = state.pg;
  state.pg = undefined;
  state.generation = {};
  state.missed = false;
  if (pg) {
    await pg.ready.catch(() => undefined);
    await pg.client?.end().catch(() => undefined);
  }
}
