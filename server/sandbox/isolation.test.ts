import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxPool } from "./pool";

let pool: SandboxPool;
beforeAll(async () => {
  pool = new SandboxPool({ size: 1 });
  await pool.warm();
});
afterAll(async () => {
  await pool.shutdown();
});

const run = (code: string, orgDid = "did:svc:org:a") =>
  pool.run({ code, input: null, memoryMb: 32, timeoutMs: 2000, orgDid });

/** Each probe either sees `undefined` or throws: it never reaches anything of the host. */
const probes: [string, string][] = [
  ["globalThis.process", `return typeof globalThis.process;`],
  ["require", `return typeof require;`],
  ["fetch", `return typeof fetch;`],
  ["setTimeout", `return typeof setTimeout;`],
  ["(0,eval)", `return (0, eval)("typeof process + typeof require + typeof fetch");`],
  ["Function constructor", `return Function("return typeof process")();`],
  ["AsyncFunction constructor", `return await (async () => {}).constructor("return typeof process")();`],
  ["the constructor chain", `return ({}).constructor.constructor("return typeof globalThis.process")();`],
  ["the host bridge functions", `return typeof __svcCall + typeof __svcNotify;`],
  ["std/os modules", `return typeof std + typeof os;`],
];

describe("nothing of the host is reachable", () => {
  it.each(probes)("%s", async (_, body) => {
    const out = await run(`export default async () => { ${body} }`);
    expect(out.ok).toBe(true);
    expect(String(out.ok && out.result).replace(/undefined/g, "")).toBe("");
  });

  it.each([
    ['import("fs")', `export default async () => (await import("fs")).readFileSync("/etc/passwd", "utf8");`],
    ['import("node:child_process")', `export default async () => (await import("node:child_process")).execSync("id");`],
    [
      "a static import of node:fs",
      `import fs from "node:fs";\nexport default async () => fs.readFileSync("/etc/passwd", "utf8");`,
    ],
  ])("%s throws", async (_, code) => {
    const out = await run(code);
    expect(out).toMatchObject({
      ok: false,
      error: { code: "handler_error", message: expect.stringMatching(/could not load module/) },
    });
  });

  it("an organization's globals do not leak into another organization's run, nor into its own next run", async () => {
    const plant = `export default async () => { globalThis.secret = "s3cret"; Object.prototype.leak = 1; return typeof globalThis.secret; }`;
    const look = `export default async () => [typeof globalThis.secret, ({}).leak === undefined];`;
    expect(await run(plant, "did:svc:org:a")).toEqual({ ok: true, result: "string" });
    expect(await run(look, "did:svc:org:a")).toEqual({ ok: true, result: ["undefined", true] });
    expect(await run(look, "did:svc:org:b")).toEqual({ ok: true, result: ["undefined", true] });
  });

  it("ctx cannot be altered by the bundle", async () => {
    const out = await run(
      `export default async (input, ctx) => { try { ctx.progress = () => 1; } catch (e) { return e.name; } return "altered"; }`,
    );
    expect(out).toEqual({ ok: true, result: "TypeError" });
  });
});
