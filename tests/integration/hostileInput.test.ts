import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployAndWait } from "./agentsHelpers";
import { apiKey, call, waitFor, type ApiResult } from "./harness";
import { killAll, startSvcProcess, type SvcProcess } from "./svcProcesses";

/**
 * Issue 26, item 4: one request must never stop the server. A web process (server/main.ts's
 * /v1, /livez and in-process worker, tests/integration/webProcess.ts) is sent the worst case of
 * each language a caller hands svc — JSON Logic, JSON Schema and its patterns, Mustache, agent
 * code — while a second client polls /livez without pause. Bounds stated here:
 * - every hostile request is answered 4xx (400, naming the field) within HOSTILE_ANSWER_MS;
 * - /livez never waits more than LIVEZ_MAX_MS beyond the longest wait benign requests of the
 *   same kinds caused (the machine's own noise, measured first: on a quiet machine a few ms);
 * - the process is alive and answering afterwards.
 * Before the fix: the JSON Logic doubling killed the process (heap), ^(a+)+$ on 5,000 characters
 * never returned, uniqueItems over 16,000 objects took 27 s, 5,000 nested sections answered 500.
 */
const HOSTILE_ANSWER_MS = 5000;
const LIVEZ_MAX_MS = 250;

const processes: SvcProcess[] = [];
let url = "";
let token = "";
let loopAgent = "";
/** The longest /livez wait under benign requests (measured in beforeAll). */
let baseline = 0;
let allocAgent = "";
afterAll(() => killAll(processes));

interface Polled {
  max: number;
  polls: number;
  failures: string[];
  /** [when the poll started (ms since the epoch, fractional), how long it waited] */
  samples: [number, number][];
}

/** The longest /livez wait among polls that overlapped [from, to]. */
const longestDuring = (p: Polled, from: number, to: number) =>
  Math.round(Math.max(0, ...p.samples.filter(([t, w]) => t <= to && t + w >= from).map(([, w]) => w)));
const now = () => performance.timeOrigin + performance.now();

/**
 * Polls /livez back to back from a worker thread, keeping the longest wait, until stopped: its
 * own event loop, so building the hostile bodies here does not delay its polls.
 */
async function livezPoller() {
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
    let stopped = false, max = 0, polls = 0;
    const failures = [], samples = [];
    parentPort.on("message", () => { stopped = true; });
    (async () => {
      // The first fetch of a thread loads its HTTP client: not a wait of the server's.
      await (await fetch(workerData + "/livez")).text();
      parentPort.postMessage("ready");
      while (!stopped) {
        const t = performance.now();
        try {
          const res = await fetch(workerData + "/livez");
          await res.text();
          if (res.status !== 200) failures.push("status " + res.status);
        } catch (e) {
          failures.push(String(e));
        }
        const waited = performance.now() - t;
        max = Math.max(max, waited);
        samples.push([performance.timeOrigin + t, waited]);
        polls++;
        await new Promise((r) => setTimeout(r, 5));
      }
      parentPort.postMessage({ max, polls, failures, samples });
    })();`,
    { eval: true, workerData: url },
  );
  await new Promise((resolve) => worker.once("message", resolve));
  return {
    async stop(): Promise<Polled> {
      const result = new Promise<Polled>((resolve) => worker.once("message", resolve));
      worker.postMessage("stop");
      const r = await result;
      await worker.terminate();
      return r;
    },
  };
}

async function timedCall(method: string, path: string, body?: unknown): Promise<ApiResult & { ms: number }> {
  const t = performance.now();
  const res = await call(url, method, path, { token, ...(body === undefined ? {} : { body }) });
  return { ...res, ms: performance.now() - t };
}

const meta = (key: string) => ({ id: key, namespace: "hostile", scope: "organization", description: "" });
const publish = (key: string, content: string, input_schema?: object) =>
  timedCall("POST", `/v1/prompts/${key}/versions`, {
    version: "1.0.0",
    content,
    meta: meta(key),
    ...(input_schema ? { input_schema } : {}),
  });
const render = (key: string, inputs: object) => timedCall("POST", `/v1/prompts/${key}/render`, { inputs });

const emit = (id: string) => ({ id, node_type: "svc", operation: "emitEvent", input: { type: `hostile.${id}` } });
const conditionWorkflow = (condition: unknown, input: object = {}) => ({
  input,
  nodes: [{ id: "c", node_type: "condition", condition }, emit("yes"), emit("no")],
  edges: [
    { from_node_id: "c", to_node_id: "yes", edge_type: "condition_true" },
    { from_node_id: "c", to_node_id: "no", edge_type: "condition_false" },
  ],
});
const doubling = (list: unknown) => ({
  reduce: [list, { merge: [{ var: "accumulator" }, { var: "accumulator" }] }, [1]],
});

const aaa = (n: number) => `${"a".repeat(n)}!`;

beforeAll(async () => {
  // The in-process worker runs the workflows and agents; one sandbox thread, like the other process tests.
  const web = await startSvcProcess("web", {}, processes);
  url = web.url!;
  token = (await apiKey()).token;
  // Published before the poller starts: their set-up is not what is measured.
  const setups = await Promise.all([
    publish("redos", "{{s}}", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } }),
    publish("redos-keys", "x", {
      type: "object",
      patternProperties: { "^(a+)+$": { type: "number" } },
      additionalProperties: false,
    }),
    publish("redos-names", "x", { type: "object", propertyNames: { pattern: "^(a+)+$" } }),
    publish("unique", "x", { type: "object", properties: { list: { type: "array", uniqueItems: true } } }),
    publish("refs", "x", {
      definitions: Object.fromEntries([
        ["l30", { type: "string" }],
        ...Array.from({ length: 30 }, (_, i) => [
          `l${i}`,
          { anyOf: [{ $ref: `#/definitions/l${i + 1}` }, { $ref: `#/definitions/l${i + 1}` }] },
        ]),
      ]),
      type: "object",
      properties: { v: { $ref: "#/definitions/l0" } },
    }),
    publish("repeat", `{{#items}}${"x".repeat(60 * 1024)}{{/items}}`),
    publish("values", "{{a}}".repeat(10_000)),
  ]);
  for (const s of setups) expect(s.status, JSON.stringify(s.body)).toBe(201);
  [loopAgent, allocAgent] = await Promise.all([
    deployAndWait(url, token, "hostile-loop", "export default async () => { for (;;) {} };", {
      limits: { timeout_ms: 500 },
    }),
    deployAndWait(
      url,
      token,
      "hostile-alloc",
      "export default async (input) => { if (input.ok) return {}; const a = []; for (;;) a.push(new Array(1e6).fill(1)); };",
      { limits: { memory_mb: 16, timeout_ms: 5000 } },
    ),
  ]);
  // Warm-up: a fresh process loads each area's code on its first call (seconds of the event loop
  // under tsx), which is not what is measured. One benign call of each kind first.
  const benign = await timedCall("POST", "/v1/workflows", conditionWorkflow({ "==": [1, 1] }));
  expect(benign.status).toBe(201);
  await ended(benign.body.workflow_id);
  // Each prompt's schema and template are compiled on its first render (once per version): done
  // here with benign inputs, so what is measured below is the checking and rendering.
  for (const key of ["redos", "redos-keys", "redos-names", "unique", "refs", "repeat", "values"])
    expect((await render(key, {})).status).toBeLessThan(500);
  const warm = await timedCall("POST", `/v1/agents/${allocAgent}/invoke`, { input: { ok: true } });
  expect(warm.status).toBe(202);
  await executionEnded(warm.body.id);

  // The machine's own noise: the longest /livez wait while benign requests of the same kinds are
  // served (on a 2-core machine at load 20 it alone reached 200 ms). The bound below is added to it.
  const poller = await livezPoller();
  for (let i = 0; i < 3; i++) {
    await timedCall("POST", "/v1/workflows", conditionWorkflow({ "==": [1, 1] }));
    for (const key of ["redos", "unique", "refs", "repeat", "values"]) await render(key, {});
    await publish(`benign-${i}`, "{{#a}}x{{/a}}");
  }
  baseline = (await poller.stop()).max;
}, 120_000);

const ended = (id: string) =>
  waitFor(
    "the workflow to end",
    async () => {
      const res = await call(url, "GET", `/v1/workflows/${id}`, { token });
      return res.body.status === "running" ? undefined : res.body;
    },
    30_000,
  );

const executionEnded = (id: string) =>
  waitFor(
    "the execution to end",
    async () => {
      const res = await call(url, "GET", `/v1/executions/${id}`, { token });
      return ["completed", "failed", "cancelled"].includes(res.body.status) ? res.body : undefined;
    },
    30_000,
  );

describe("hostile input while /livez is polled", () => {
  it("answers every hostile request 4xx within its bound, /livez never waits, the process lives on", async () => {
    const poller = await livezPoller();
    // [what, the request, the fields its 400 may name]
    const cases: [string, () => Promise<ApiResult & { ms: number }>, string | string[]][] = [
      // JSON Logic: evaluated at validation (and at run time, below).
      [
        "JSON Logic doubling (26)",
        () => timedCall("POST", "/v1/workflows", conditionWorkflow(doubling(Array.from({ length: 26 }, (_, i) => i)))),
        "nodes[0].condition",
      ],
      [
        "JSON Logic doubling (200)",
        () => timedCall("POST", "/v1/workflows", conditionWorkflow(doubling(Array.from({ length: 200 }, (_, i) => i)))),
        "nodes[0].condition",
      ],
      [
        "JSON Logic log",
        () => timedCall("POST", "/v1/workflows", conditionWorkflow({ log: { var: "nodes" } })),
        "nodes[0].condition",
      ],
      // JSON Schema patterns: linear on RE2.
      ["pattern ^(a+)+$, 30 characters", () => render("redos", { s: aaa(30) }), "/inputs/s"],
      ["pattern ^(a+)+$, 5,000 characters", () => render("redos", { s: aaa(5000) }), "/inputs/s"],
      ["patternProperties ^(a+)+$", () => render("redos-keys", { [aaa(5000)]: 1 }), `/inputs/${aaa(5000)}`],
      ["propertyNames ^(a+)+$", () => render("redos-names", { [aaa(5000)]: 1 }), "/inputs"],
      [
        "a pattern RE2 cannot run",
        () => publish("lookahead", "x", { properties: { s: { pattern: "^(?=a)(a+)+$" } } }),
        "input_schema.properties.s.pattern",
      ],
      // JSON Schema work: uniqueItems over 16,000 objects, $refs doubling per level.
      [
        "uniqueItems over 8,000 items",
        // Distinct numbers, then a duplicate: ajv compared every pair (quadratic) without an item type.
        () => render("unique", { list: [...Array.from({ length: 8_000 }, (_, i) => i), 0] }),
        // The duplicate, or the work bound on a loaded machine.
        ["/inputs/list", "/inputs"],
      ],
      ["$refs doubling 30 levels", () => render("refs", { v: 1 }), "/inputs"],
      // Mustache.
      [
        "5,000 nested sections",
        () => publish("nested", `${"{{#a}}".repeat(5000)}x${"{{/a}}".repeat(5000)}`),
        "content",
      ],
      ["a 60 KB section 9,000 times (540 MB)", () => render("repeat", { items: Array(9_000).fill(1) }), "/inputs"],
      ["10,000 × {{a}} of 900 KB", () => render("values", { a: "y".repeat(900 * 1024) }), "/inputs"],
    ];
    const answers: string[] = [];
    const windows: [string, number, number][] = [];
    for (const [name, send, field] of cases) {
      const from = now();
      const res = await send();
      windows.push([name, from, now()]);
      answers.push(`${name}: ${res.status} in ${Math.round(res.ms)} ms`);
      expect(res.status, `${name}: ${JSON.stringify(res.body).slice(0, 500)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, name).toBeLessThan(500);
      expect(res.ms, name).toBeLessThan(HOSTILE_ANSWER_MS);
      const fields = (res.body.errors as { field: string }[]).map((e) => e.field);
      expect(
        fields.some((f) => [field].flat().includes(f)),
        `${name}: ${JSON.stringify(res.body).slice(0, 500)}`,
      ).toBe(true);
    }
    const livez = await poller.stop();
    console.log(
      `hostile answers: ${answers.join("; ")}; benign requests: /livez longest ${Math.round(baseline)} ms; hostile: /livez: ${livez.polls} polls, longest ${Math.round(livez.max)} ms; longest during each: ${windows.map(([n, f, t]) => `${n} ${longestDuring(livez, f, t)} ms`).join("; ")}`,
    );
    expect(livez.failures).toEqual([]);
    expect(livez.max, `benign requests: ${Math.round(baseline)} ms`).toBeLessThan(LIVEZ_MAX_MS + baseline);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    expect(processes[0]!.child.exitCode).toBeNull();
  });

  it("fails a condition that hits a bound at run time, and an agent that loops or allocates, without stopping the process", async () => {
    const poller = await livezPoller();
    // Valid over empty input (the list is not there), doubling over the run's input.
    const t0 = now();
    const started = await timedCall(
      "POST",
      "/v1/workflows",
      conditionWorkflow(doubling({ var: "input.l" }), { l: Array.from({ length: 40 }, (_, i) => i) }),
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const dag = await ended(started.body.workflow_id);
    const condition = dag.nodes.find((n: { node_name: string }) => n.node_name === "c");
    expect(condition).toMatchObject({ status: "failed", error: { code: "condition_limit" } });

    const t1 = now();
    const runs = await Promise.all(
      [loopAgent, allocAgent].map((id) => timedCall("POST", `/v1/agents/${id}/invoke`, { input: {} })),
    );
    for (const r of runs) expect(r.status, JSON.stringify(r.body)).toBe(202);
    for (const r of runs) {
      const execution = await executionEnded(r.body.id);
      expect(execution.status).toBe("failed");
    }
    const t2 = now();
    const livez = await poller.stop();
    console.log(
      `run-time bounds (benign: ${Math.round(baseline)} ms): /livez ${livez.polls} polls, longest ${Math.round(livez.max)} ms; during the workflow ${longestDuring(livez, t0, t1)} ms, during the agents ${longestDuring(livez, t1, t2)} ms`,
    );
    expect(livez.failures).toEqual([]);
    expect(livez.max, `benign requests: ${Math.round(baseline)} ms`).toBeLessThan(LIVEZ_MAX_MS + baseline);
    expect(processes[0]!.child.exitCode).toBeNull();
  });
});
