// The slice of autocannon 8's programmatic API the benchmarks use. autocannon ships no types and
// @types/autocannon is not a dependency, so strict TypeScript needs this declaration.
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds; ignored when `amount` is set. */
    duration?: number;
    /** Total requests to send; the run ends once every one of them has been answered. */
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
  }

  export interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    /** `total` counts completed requests, `sent` every request written to a socket. */
    requests: { total: number; sent: number; mean: number };
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
    ): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
