import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/** The module-boundary rules of eslint.config.mjs, each shown to refuse what it should and only that. */
const eslint = new ESLint({ cwd: process.cwd() });

async function refusals(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.line}: ${m.ruleId}`);
}

const RULE = "@typescript-eslint/no-restricted-imports";

describe("module boundaries", () => {
  it("server/ imports neither app/ nor components/", async () => {
    expect(
      await refusals(
        "server/agents/probe.ts",
        `import { a } from "@/app/layout";\nimport { b } from "../../components/ui/button";\nexport { a, b };\n`,
      ),
    ).toEqual([`1: ${RULE}`, `2: ${RULE}`]);
  });

  it("an area uses another area's services, not its router, operations, tasks or internal modules", async () => {
    const code = [
      `import { a } from "../controlPlane/router";`,
      `import { b } from "@/server/provenance/operations";`,
      `import { c } from "../worker/tasks";`,
      `import { d } from "../ledger/internal/x";`,
      `import { e } from "../controlPlane/listOrgs";`,
      `import { f } from "./router";`,
      `export { a, b, c, d, e, f };`,
    ].join("\n");
    expect(await refusals("server/agents/probe.ts", code)).toEqual([1, 2, 3, 4].map((l) => `${l}: ${RULE}`));
  });

  it("the composition root imports every area's router, operations and tasks; nothing else does", async () => {
    const code = `import { a } from "./identity/router";\nimport { b } from "./identity/operations";\nimport { c } from "./identity/tasks";\nexport { a, b, c };\n`;
    expect(await refusals("server/areas.ts", code)).toEqual([]);
    expect(
      await refusals(
        "server/trpc/probe.ts",
        `import { a } from "../identity/router";\nimport { b } from "../identity/operations";\nexport { a, b };\n`,
      ),
    ).toEqual([`1: ${RULE}`, `2: ${RULE}`]);
    expect(await refusals("server/worker/probe.ts", `import { a } from "../identity/tasks";\nexport { a };\n`)).toEqual(
      [`1: ${RULE}`],
    );
    // Files named for the role count too: an area may split its adapters (`benchmarkRouter.ts`).
    const split = [
      `import { a } from "../reasoning/benchmarkRouter";`,
      `import { b } from "@/server/marketplace/invocationOperations";`,
      `import { c } from "../reasoning/benchmarkOperations";`,
      `import { d } from "../approvals/approvalTasks";`,
      `import { e } from "./benchmarkRouter";`,
      `export { a, b, c, d, e };`,
    ].join("\n");
    expect(await refusals("server/prompts/probe.ts", split)).toEqual([1, 2, 3, 4].map((l) => `${l}: ${RULE}`));
    expect(await refusals("server/areas.ts", split.replace(/\.\.\/|@\/server\//g, "./"))).toEqual([]);
  });

  it("the kernel imports no area and not the root: only the kernel, its own folder and the root organization", async () => {
    const code = [
      `import { a } from "../agents/agents";`,
      `import { b } from "@/server/events/putEvent";`,
      `import { c } from "../webhooks/deliveryJob";`,
      `import { d } from "../areas";`,
      `import { e } from "@/server/appRouter";`,
      `import { f } from "../identity/authenticate";`,
      `import { g } from "../db/client";`,
      `import { h } from "../processWide";`,
      `import { i } from "./registry";`,
      `import { j } from "../provenance/record";`,
      `import { k } from "../ledger/proofs";`,
      `import { l } from "../setup/rootOrg";`,
      `import { m } from "../setup/bootstrap";`,
      `export { a, b, c, d, e, f, g, h, i, j, k, l, m };`,
    ].join("\n");
    const kernel = [
      "http",
      "trpc",
      "openapi",
      "jobs",
      "worker",
      "governance",
      "sandbox",
      "db",
      "identity",
      "provenance",
    ];
    for (const folder of [...kernel, "ledger"]) {
      expect(await refusals(`server/${folder}/probe.ts`, code), folder).toEqual(
        [1, 2, 3, 4, 5, 13].map((l) => `${l}: ${RULE}`),
      );
    }
    // The entry points compose the root: the worker's main.ts, server/main.ts, the CLI.
    const compose = `import { composeServer } from "../areas";\nexport { composeServer };\n`;
    expect(await refusals("server/worker/main.ts", compose)).toEqual([]);
    expect(await refusals("server/cli/probe.ts", compose)).toEqual([]);
    expect(await refusals("server/main.ts", compose.replace("../", "./"))).toEqual([]);
    // An area may use another area's services.
    expect(
      await refusals("server/webhooks/probe.ts", `import { a } from "../events/putEvent";\nexport { a };\n`),
    ).toEqual([]);
  });

  it("components import server types and schemas only", async () => {
    const code = [
      `import { database } from "@/server/db/client";`,
      `import { listOrgs } from "../../server/controlPlane/listOrgs";`,
      `import type { AppRouter } from "@/server/appRouter";`,
      `import { CpOrg } from "@/server/controlPlane/schemas";`,
      `export { database, listOrgs, CpOrg };`,
      `export type { AppRouter };`,
    ].join("\n");
    expect(await refusals("components/console/Probe.tsx", code)).toEqual([`1: ${RULE}`, `2: ${RULE}`]);
  });
});
