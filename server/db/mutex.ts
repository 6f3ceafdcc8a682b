import { AsyncLocalStorage } from "node:async_hooks";

/**
 * A first-come, first-served async mutex, re-entrant within one async call chain: code that holds
 * it (a `writeLock` around a ledger write) can call something that takes it again (the raw
 * driver's own write) without waiting for itself. Work that merely started inside the holder's
 * chain (a timer it set) and runs after the holder released it waits like anyone else.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private readonly holder = new AsyncLocalStorage<{ held: boolean }>();
  /** Callers holding or waiting for the lock (the metrics' database pool gauge). */
  pending = 0;

  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    if (this.holder.getStore()?.held) return fn();
    this.pending++;
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    const hold = { held: true };
    try {
      return await this.holder.run(hold, fn);
    } finally {
      hold.held = false;
      this.pending--;
      release();
    }
  }
}
