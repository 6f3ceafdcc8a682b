import type { Database } from "../db/client";
import { deleteFinished } from "./claim";
import { describeError } from "./finishJob";
import { noteOutage } from "./outage";
import type { ClaimedJob } from "./types";

/** How long deletions wait after an outage met them before trying again. */
const OUTAGE_RETRY_MS = 500;

/**
 * The jobs whose handlers returned without recording an outcome, deleted in batches (one
 * statement for all that finished in the same turn). In an outage a batch waits, its leases kept
 * by the worker's heartbeat, and is deleted once the database answers again.
 */
export class FinishedJobs {
  private readonly waiting: ClaimedJob[] = [];
  /** Ids not yet deleted, the batch being deleted included: the worker still holds them. */
  private readonly undeleted = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private deleting: Promise<void> = Promise.resolve();
  private abandoned = false;

  constructor(
    private readonly db: Promise<Database>,
    private readonly log: (line: string) => void,
  ) {}

  add(job: ClaimedJob): void {
    this.waiting.push(job);
    this.undeleted.add(job.id);
    this.schedule(0);
  }

  get size(): number {
    return this.undeleted.size;
  }

  ids(): string[] {
    return [...this.undeleted];
  }

  /** Resolves once every finished job is deleted (waiting out an outage), or at once when abandoned. */
  async flushed(): Promise<void> {
    for (;;) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.deleteWaiting();
      }
      await this.deleting;
      if (this.waiting.length === 0 || this.abandoned) return;
      await new Promise((r) => setTimeout(r, OUTAGE_RETRY_MS));
    }
  }

  /** Stops deleting: as in a crash, the jobs are claimed again after their lease. */
  abandon(): void {
    this.abandoned = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.abandoned) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.deleteWaiting();
    }, delayMs);
  }

  private deleteWaiting(): void {
    const batch = this.waiting.splice(0);
    this.deleting = this.deleting.then(() => this.delete(batch));
  }

  private async delete(batch: ClaimedJob[]): Promise<void> {
    try {
      await deleteFinished(await this.db, batch);
    } catch (e) {
      if (noteOutage(e) && !this.abandoned) {
        this.waiting.unshift(...batch);
        this.schedule(OUTAGE_RETRY_MS);
        return;
      }
      this.log(
        `could not delete ${batch.length} finished job(s); they run again after their lease: ${describeError(e)}`,
      );
    }
    for (const job of batch) this.undeleted.delete(job.id);
  }
}
