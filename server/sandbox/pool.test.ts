import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerBridgeEntry, type RunInfo } from "./bridge";
import {
  checkBundle,
  defaultPoolSize,
  runBundle,
  sandboxPool,
  SandboxPool,
  shutdownSandbox,
  type RunBundleRequest,
} from "./pool";

const ORG = "did:svc:org:test";
let pool: SandboxPool;

beforeAll(async () => {
  pool = new SandboxPool({ size: 2 });
  await pool.warm();
});
afterAll(async () => {
  await pool.shutdown();
});

const run = (code: string, extra: Partial<RunBundleRequest> = {}) =>
  pool.run({ code, input: null, memoryMb: 64, timeoutMs: 2000, orgDid: ORG, ...extra });

describe("a bundle's handler", () => {
  it("returns its value through JSON", async () => {
    const out = await run(
      `export default async (input, ctx) => ({ doubled: input.n * 2, when: new Date(0), gone: undefined })`,
      { input: { n: 21 } },
    );
    expect(out).toEqual({ ok: true, result: { doubled: 42, when: "1970-01-01T00:00:00.000Z" } });
  });

  it("sends progress and log lines to the run's callbacks, and refuses a bad percent", async () => {
    const progress: [number, string | undefined][] = [];
    const lines: [string, string][] = [];
    const out = await run(
      `export default async (input, ctx) => {
        await ctx.progress(10, "start");
        const o = { a: 1, big: 2n }; o.self = o;
        ctx.log("state", o, [1, 2]);
        console.warn("careful");
        let refused;
        try { await ctx.progress(101); } catch (e) { refused = e.name + ": " + e.message; }
        try { await ctx.progress(1.5); } catch (e) { refused += " | " + e.name; }
        await ctx.progress(100);
        return refused;
      }`,
      {
        bridge: { onProgress: (p, m) => void progress.push([p, m]), onLog: (l, level) => void lines.push([l, level]) },
      },
    );
    expect(out).toEqual({
      ok: true,
      result: "TypeError: ctx.progress: percent must be an integer from 0 to 100 | TypeError",
    });
    expect(progress).toEqual([
      [10, "start"],
      [100, undefined],
    ]);
    expect(lines).toEqual([
      ['state {"a":1,"big":"2n","self":"[Circular]"} [1,2]', "info"],
      ["careful", "warn"],
    ]);
  });

  it("caps the log at 200 lines of 2,048 characters", async () => {
    const lines: string[] = [];
    const out = await run(
      `export default async (i, ctx) => { for (let k = 0; k < 500; k++) ctx.log("x".repeat(5000)); return 1; }`,
      {
        bridge: { onLog: (l) => void lines.push(l) },
      },
    );
    expect(out.ok).toBe(true);
    expect(lines).toHaveLength(201);
    expect(lines[0]).toHaveLength(2048);
    expect(lines[200]).toMatch(/log truncated/);
  });

  it("calls a registered bridge entry and gets its answer, or its rejection", async () => {
    const seen: { run: RunInfo; args: unknown[] }[] = [];
    const unregister = [
      registerBridgeEntry("test.echo", async (r, args) => {
        seen.push({ run: r, args });
        return { echoed: args, org: r.orgDid, execution: r.context.executionId };
      }),
      registerBridgeEntry("test.refuse", async () => {
        throw Object.assign(new Error("not allowed here"), { name: "Forbidden" });
      }),
    ];
    try {
      const out = await run(
        `export default async (input, ctx) => {
          const answer = await ctx.test.echo("a", { b: [1] });
          let refusal;
          try { await ctx.test.refuse(); } catch (e) { refusal = e instanceof Error && e.name + ": " + e.message; }
          return { answer, refusal, frozen: Object.isFrozen(ctx) && Object.isFrozen(ctx.test), keys: Object.keys(ctx).sort() };
        }`,
        { bridge: { context: { executionId: "exe_1" } } },
      );
      expect(out).toEqual({
        ok: true,
        result: {
          answer: { echoed: ["a", { b: [1] }], org: ORG, execution: "exe_1" },
          refusal: "Forbidden: not allowed here",
          frozen: true,
          keys: ["log", "progress", "test"],
        },
      });
      expect(seen[0]!.run.signal.aborted).toBe(true);
    } finally {
      for (const u of unregister) u();
    }
  });
});

describe("faults end the run with their code", () => {
  it("while(true){} ends at its time limit with timeout", async () => {
    const started = performance.now();
    const out = await run(`export default async () => { while (true) {} }`, { timeoutMs: 300 });
    const took = performance.now() - started;
    expect(out).toMatchObject({ ok: false, error: { code: "timeout" } });
    expect(took).toBeGreaterThanOrEqual(290);
    // Soon after its 300 ms limit: about 350 ms on a quiet machine; the bound leaves room for a loaded one.
    expect(took).toBeLessThan(3_000);
  });

  it("the time limit is the run's own: a cold thread's warm-up does not count against it", async () => {
    // The warm-up took 1.5 s on a quiet machine and 6 s on a loaded one, where a deploy's check of a
    // trivial bundle (limit 5 s) failed with timeout.
    const cold = new SandboxPool({ size: 1 });
    try {
      const out = await cold.run({
        code: `export default async () => 42`,
        input: null,
        memoryMb: 64,
        timeoutMs: 200,
        orgDid: ORG,
      });
      expect(out).toEqual({ ok: true, result: 42 });
    } finally {
      await cold.shutdown();
    }
  });

  it("a handler waiting forever on a promise ends with timeout", async () => {
    const out = await run(`export default async () => { await new Promise(() => {}); }`, { timeoutMs: 300 });
    expect(out).toMatchObject({ ok: false, error: { code: "timeout" } });
  });

  it.each([
    ["strings pushed", `const a = []; for (;;) a.push("x".repeat(1e6) + Math.random());`],
    ["arrays pushed", `const a = []; for (;;) a.push(new Array(1e6).fill(1.5));`],
    ["Uint8Arrays pushed", `const a = []; for (;;) a.push(new Uint8Array(1 << 20));`],
    ["one 1 GB ArrayBuffer", `return new ArrayBuffer(1024 * 1024 * 1024).byteLength;`],
    ["a 1 GB string", `return "x".repeat(2 ** 30).length;`],
  ])("allocating 1 GB (%s) ends with memory_limit", async (_, body) => {
    const out = await run(`export default async () => { ${body} }`, { memoryMb: 32, timeoutMs: 10_000 });
    expect(out).toMatchObject({ ok: false, error: { code: "memory_limit" } });
  });

  it("deep recursion ends with stack_overflow, while 1000 frames are fine", async () => {
    expect(await run(`const f = (n) => f(n + 1) + 1; export default async () => f(0);`)).toMatchObject({
      ok: false,
      error: { code: "stack_overflow" },
    });
    expect(await run(`const f = (n) => n === 0 ? 0 : f(n - 1) + 1; export default async () => f(1000);`)).toEqual({
      ok: true,
      result: 1000,
    });
  });

  it("a thrown error is handler_error with its name, message and stack", async () => {
    const out = await run(
      `function inner() { throw new RangeError("no such thing"); }\nexport default async () => inner();`,
    );
    expect(out).toMatchObject({
      ok: false,
      error: { code: "handler_error", name: "RangeError", message: "no such thing" },
    });
    expect(!out.ok && out.error.stack).toMatch(/inner/);
  });

  /**
   * How long `code`'s run takes to end once cancelled (with `reason`), checking its outcome each time.
   * The requirement is a second; this test's own thread waiting for a core on a loaded machine is
   * counted in it too, so the measurement is taken up to three times and the best must meet it: a
   * cancel that really takes longer (or never comes: the run's limit is 30 s) misses all three.
   */
  async function cancelTakes(code: string, reason: string | undefined, expected: string): Promise<number> {
    const tries: number[] = [];
    for (let i = 0; i < 3 && !tries.some((ms) => ms < 1000); i++) {
      const running = run(code, { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 150));
      const t0 = performance.now();
      running.cancel(reason);
      expect(await running).toMatchObject({ ok: false, error: { code: expected } });
      tries.push(performance.now() - t0);
    }
    return Math.min(...tries);
  }

  it("cancel stops a busy handler within a second, with the code given", { timeout: 30_000 }, async () => {
    expect(await cancelTakes(`export default async () => { while (true) {} }`, undefined, "cancelled")).toBeLessThan(
      1000,
    );
    expect(
      await cancelTakes(
        `export default async () => { await new Promise(() => {}); }`,
        "delegation_revoked",
        "delegation_revoked",
      ),
    ).toBeLessThan(1000);
  });

  it("the slot runs again normally after every fault", async () => {
    const outs = await Promise.all([
      run(`export default async () => "fine"`),
      run(`export default async () => "also fine"`),
    ]);
    expect(outs).toEqual([
      { ok: true, result: "fine" },
      { ok: true, result: "also fine" },
    ]);
  });
});

describe("loading a bundle", () => {
  it("a module that does not parse is syntax_error", async () => {
    expect(await run(`export default async (input => input`)).toMatchObject({
      ok: false,
      error: { code: "syntax_error" },
    });
    expect(await pool.check({ code: `export default async (input => input`, orgDid: ORG })).toMatchObject({
      ok: false,
      error: { code: "syntax_error" },
    });
  });

  it("a module without a default function is no_handler", async () => {
    expect(await run(`export const handler = async () => 1;`)).toMatchObject({
      ok: false,
      error: { code: "no_handler" },
    });
    expect(await pool.check({ code: `export default 42;`, orgDid: ORG })).toMatchObject({
      ok: false,
      error: { code: "no_handler" },
    });
  });

  it("check accepts a module with a default function without calling it", async () => {
    expect(await pool.check({ code: `export default async () => { while (true) {} };`, orgDid: ORG })).toEqual({
      ok: true,
    });
  });
});

describe("the host", () => {
  it("stays responsive while a sandbox is busy, and two runs go on in two slots at once", async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 20);
    // A second each: long enough that a loaded machine starting one thread late still shows the overlap.
    const spin = `export default async () => { const start = Date.now(); while (Date.now() < start + 1000) {} return [start, Date.now()]; }`;
    const [a, b] = await Promise.all([run(spin), run(spin)]);
    clearInterval(interval);
    if (!a.ok || !b.ok) throw new Error("a run failed");
    const [aStart, aEnd] = a.result as [number, number];
    const [bStart, bEnd] = b.result as [number, number];
    // Overlapping busy loops: in one slot they would run one after the other.
    expect(aStart < bEnd && bStart < aEnd).toBe(true);
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it("answers each of many runs on a warm pool with its own input's result and progress", async () => {
    // What a run costs on a warm pool is measured by `npm run bench -- sandbox`.
    const code = `export default async (input, ctx) => { await ctx.progress(input.n % 100); return { n: input.n }; }`;
    for (let i = 0; i < 40; i++) {
      const progress: number[] = [];
      const out = await pool.run({
        code,
        input: { n: i },
        memoryMb: 64,
        timeoutMs: 1000,
        orgDid: ORG,
        bridge: { onProgress: (p) => void progress.push(p), onLog: () => undefined },
      });
      expect(out).toEqual({ ok: true, result: { n: i } });
      expect(progress).toEqual([i % 100]);
    }
  });
});

describe("the process's pool", () => {
  it("runBundle and checkBundle use one pool of SVC_SANDBOX_THREADS threads; shutdown ends what is running", async () => {
    const before = process.env.SVC_SANDBOX_THREADS;
    process.env.SVC_SANDBOX_THREADS = "1";
    try {
      expect(sandboxPool()).toBe(sandboxPool());
      expect(sandboxPool().size).toBe(1);
      expect(await checkBundle({ code: `export default async () => 1`, orgDid: ORG })).toEqual({ ok: true });
      const busy = runBundle({
        code: `export default async () => { while (true) {} }`,
        memoryMb: 16,
        timeoutMs: 30_000,
        orgDid: ORG,
      });
      const queued = runBundle({ code: `export default async () => 1`, memoryMb: 16, timeoutMs: 1000, orgDid: ORG });
      expect(sandboxPool().stats()).toEqual({ size: 1, busy: 1, queued: 1 });
      await shutdownSandbox();
      expect(await busy).toMatchObject({ ok: false, error: { code: "cancelled" } });
      expect(await queued).toMatchObject({ ok: false, error: { code: "cancelled" } });
      process.env.SVC_SANDBOX_THREADS = "0";
      expect(() => defaultPoolSize()).toThrow(/SVC_SANDBOX_THREADS/);
    } finally {
      if (before === undefined) delete process.env.SVC_SANDBOX_THREADS;
      else process.env.SVC_SANDBOX_THREADS = before;
    }
  });
});

describe("a bundle that tampers with its realm", () => {
  it("cannot pass a progress message or log line beyond the limits, nor telemetry out of shape", async () => {
    const progress: [number, string | undefined][] = [];
    const lines: string[] = [];
    const out = await run(
      `export default async (input, ctx) => {
        const big = "x".repeat(100000);
        String.prototype.slice = function () { return big; };
        JSON.stringify = () => big;
        await ctx.progress(50, "y".repeat(600));
        ctx.log("z".repeat(3000));
        return 1;
      }`,
      { bridge: { onProgress: (p, m) => void progress.push([p, m]), onLog: (l) => void lines.push(l) } },
    );
    expect(out).toEqual({ ok: true, result: 1 });
    expect(progress).toEqual([[50, "y".repeat(500)]]);
    expect(lines).toEqual(["z".repeat(2047) + "…"]);
  });
});

describe("sharing threads between organizations", () => {
  const LONG = `export default async (input) => { const t = Date.now(); while (Date.now() - t < 250) {} return input; }`;
  const finishOrder = async (p: SandboxPool, runs: Array<[org: string, n: number]>) => {
    const order: string[] = [];
    await Promise.all(
      runs.map(async ([org, n]) => {
        await p.run({ code: LONG, input: n, memoryMb: 64, timeoutMs: 10_000, orgDid: org });
        order.push(`${org}${n}`);
      }),
    );
    return order;
  };

  it("an organization saturating the pool holds no more than its share once another's runs wait", async () => {
    const six = Array.from({ length: 6 }, (_, n) => ["A", n] as [string, number]);
    const order = await finishOrder(pool, [...six, ["B", 0]]);
    // First come, first served would end B's run last, after all six of A's; its share starts it when A's first end.
    expect(order.indexOf("B0")).toBeLessThanOrEqual(3);
  });

  it("with a single thread, organizations take turns", async () => {
    const one = new SandboxPool({ size: 1 });
    try {
      await one.warm();
      const order = await finishOrder(one, [
        ["A", 0],
        ["A", 1],
        ["A", 2],
        ["B", 0],
        ["B", 1],
      ]);
      expect(order).toEqual(["A0", "B0", "A1", "B1", "A2"]);
    } finally {
      await one.shutdown();
    }
  });
});
