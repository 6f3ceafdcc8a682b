import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./harness";
import { withSdkPackLock } from "./sdkPackLock";

/**
 * The SDK as a user gets it: packed, installed in a fresh project, compiled under strict and run
 * against a server. Run on SQLite only (vitest.config.ts): what it checks is the package, the
 * types and one round trip, the same on either engine; sdk.test.ts runs the SDK's calls on both.
 */
const run = promisify(execFile);
const ctx = useTestServer();
const scratch = mkdtempSync(join(tmpdir(), "svc-sdk-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the SDK's package", () => {
  let tarball: string;
  beforeAll(async () => {
    const packed = await withSdkPackLock(() =>
      run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: join(process.cwd(), "sdk") }),
    );
    tarball = join(scratch, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  }, 120_000);

  // 240 s: a hang guard, not a timing (an install and two compiles took over 60 s here at a load of 22).
  it("installs in a fresh project, which compiles against it under strict and runs", async () => {
    const app = join(scratch, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    // The SDK has no dependency: the install needs nothing from the registry.
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: app });
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          lib: ["ES2023", "dom"],
          types: [],
          skipLibCheck: false,
          outDir: "out",
        },
        include: ["main.ts"],
      }),
    );
    writeFileSync(
      join(app, "main.ts"),
      [
        `import { createSvcClient, SvcProblemError, type Schema } from "@svc/sdk";`,
        `const svc = createSvcClient({ baseUrl: process.argv[2]!, token: process.argv[3] });`,
        `const health = await svc.ops.getHealth();`,
        `const names: string[] = [];`,
        `for await (const p of svc.paginate("listPassports", { query: { limit: 50 } })) names.push(p.name);`,
        `const one: Schema<"Passport"> | undefined = undefined;`,
        `try { await svc.GET("/v1/passports/{did}", { path: { did: "did:key:none" } }); }`,
        `catch (e) { if (e instanceof SvcProblemError) console.log(JSON.stringify({ status: e.status, health: health.status, n: names.length, one })); }`,
        // A call the document does not allow must not compile: checked below through a second file.
        ``,
      ].join("\n"),
    );
    // The types catch a wrong call: a missing path parameter, an unknown operation. Compiled in the
    // same program as main.ts (one tsc start, not two: each costs seconds): both are modules, so
    // neither sees the other's declarations, and tsc still emits main.js beside wrong.ts's errors.
    writeFileSync(
      join(app, "wrong.ts"),
      [
        `import { createSvcClient } from "@svc/sdk";`,
        `const svc = createSvcClient({ baseUrl: "http://localhost" });`,
        `await svc.ops.getPassport({ path: {} });`,
        `await svc.ops.noSuchOperation();`,
        `await svc.GET("/v1/no-such-path");`,
      ].join("\n"),
    );
    const tsc = join(process.cwd(), "node_modules/typescript/bin/tsc");
    // process is Node's: declared here so the fresh project needs no @types/node.
    writeFileSync(join(app, "env.d.ts"), "declare const process: { argv: string[] };\n");
    const tsconfig = JSON.parse(readFileSync(join(app, "tsconfig.json"), "utf8"));
    tsconfig.include = ["main.ts", "wrong.ts", "env.d.ts"];
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const compiled = await run(process.execPath, [tsc, "-p", "."], { cwd: app }).then(
      () => ({ stdout: "" }),
      (e: { stdout: string }) => e,
    );
    const errors = compiled.stdout.split("\n").filter((l) => /error TS\d+/.test(l));
    // main.ts compiles under strict: every error is wrong.ts's, one on each of its three wrong lines.
    expect(
      errors.filter((l) => !l.startsWith("wrong.ts(")),
      compiled.stdout,
    ).toEqual([]);
    expect(compiled.stdout).toMatch(/wrong\.ts\(3,.*\): error/);
    expect(compiled.stdout).toMatch(/wrong\.ts\(4,.*\): error/);
    expect(compiled.stdout).toMatch(/wrong\.ts\(5,.*\): error/);
    const out = await run(process.execPath, [join(app, "out/main.js"), ctx.server.url, ctx.root.token]);
    expect(JSON.parse(out.stdout)).toMatchObject({ status: 404, health: "ok" });
  }, 240_000);
});
