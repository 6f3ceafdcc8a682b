import { z } from "zod";
import { subscribeChanges, type Change } from "../db/changes";
import { database, type Database, type Db } from "../db/client";
import { Unauthenticated } from "../errors";
import type { Principal } from "../governance/principal";
import { governedProcedure } from "./init";

/**
 * Live views: what a console page shows while it changes (an execution's progress, a webhook's
 * delivery log, and next an approval inbox or a workflow's DAG), as one tRPC subscription per page
 * over server-sent events, instead of polling.
 *
 * Opening the stream is one governed read, like any query: the caller is authenticated, the
 * capability checked, the first state loaded and one provenance record written. After that the
 * stream follows change notifications (server/db/changes.ts): each committed change on the view's
 * channel, for the caller's organization, reloads the view under the same caller and sends it if
 * it differs. Updates write no records; a revoked or expired caller ends the stream.
 *
 * An area adds one: `live: liveView({ channel, capability, resourceType, input, load })` in its
 * router, and `notifyChange(tx, { channel, org, id })` where its services write what the view shows.
 */
export interface LiveViewContext<I> {
  db: Db;
  database: Database;
  principal: Principal;
  input: I;
  secret: Buffer;
}

export interface LiveView<I extends z.ZodType, T> {
  summary: string;
  /** The change channel the view follows (e.g. `executions`). */
  channel: string;
  capability: string | null;
  resourceType: string | null;
  /** The console roles admitted (the console's own views; bearer tokens are then refused). */
  roles?: readonly string[];
  input: I;
  /** Whether a change concerns this view (default: every change of the caller's organization). */
  concerns?(change: Change, input: z.output<I>): boolean;
  /** The view's state, read under the caller's authority (called at open and after changes). */
  load(ctx: LiveViewContext<z.output<I>>): Promise<T>;
  /** The resource id the opening's record names. */
  resourceOf?(input: z.output<I>): string | null;
}

/** Changes arriving closer together than this are read once. */
export const LIVE_COALESCE_MS = 150;

export function liveView<I extends z.ZodType, T>(decl: LiveView<I, T>) {
  return governedProcedure
    .meta({ capability: decl.capability, resourceType: decl.resourceType, roles: decl.roles })
    .input(decl.input)
    .subscription(async ({ ctx, input, signal }) => {
      const { scope } = ctx as unknown as {
        scope: LiveViewContext<unknown> & { setResource(id: string | null): void };
      };
      const view = {
        db: scope.db,
        database: scope.database,
        principal: scope.principal,
        secret: scope.secret,
        input: input as z.output<I>,
      };
      if (decl.resourceOf) scope.setResource(decl.resourceOf(view.input));
      // Listening before the first read: a change committed in between is not lost.
      const changes = new ChangeQueue();
      const stop = await subscribeChanges(
        decl.channel,
        (change) => {
          if (change.org === view.principal.orgDid && (decl.concerns?.(change, view.input) ?? true)) changes.mark();
        },
        // Notifications may have been missed (the database was away): read the view again.
        () => changes.mark(),
      );
      try {
        const first = await decl.load(view);
        return follow(decl, view, first, changes, stop, signal);
      } catch (e) {
        stop();
        throw e;
      }
    });
}

async function* follow<I extends z.ZodType, T>(
  decl: LiveView<I, T>,
  view: LiveViewContext<z.output<I>>,
  first: T,
  changes: ChangeQueue,
  stop: () => void,
  signal: AbortSignal | undefined,
): AsyncGenerator<T> {
  try {
    yield first;
    let last = JSON.stringify(first);
    while (!signal?.aborted) {
      if (!(await changes.next(signal))) break;
      // A burst (a run's progress, a batch of deliveries) is read once.
      await new Promise((r) => setTimeout(r, LIVE_COALESCE_MS));
      changes.clear();
      await stillAllowed(view.principal);
      const db = await database();
      const value = await decl.load({ ...view, db: db.read, database: db });
      const json = JSON.stringify(value);
      if (json === last) continue;
      last = json;
      yield value;
    }
  } finally {
    stop();
  }
}

/** The stream's caller, checked before each update is read: a revoked or expired delegation ends it. */
async function stillAllowed(principal: Principal): Promise<void> {
  if (principal.expiresAt.getTime() <= Date.now())
    throw Unauthenticated("The delegation this stream was opened with has expired.");
  const db = await database();
  const revoked = await db.read.delegation.count({
    where: {
      id: { in: principal.chain.length > 0 ? principal.chain : [principal.delegationId] },
      revokedAt: { not: null },
    },
  });
  if (revoked > 0) throw Unauthenticated("The delegation this stream was opened with has been revoked.");
}

/** A flag raised by change notifications, awaited by the stream. */
class ChangeQueue {
  private dirty = false;
  private wake: (() => void) | null = null;

  mark(): void {
    this.dirty = true;
    this.wake?.();
  }

  clear(): void {
    this.dirty = false;
  }

  /** Resolves true at the next change (at once if one came meanwhile), false when the stream is closed. */
  next(signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.dirty) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.wake = () => {
        this.wake = null;
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      };
    });
  }
}
