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
    expect(await refusals("server/identity/probe.ts", `import { a } from "@/app/layout";\nimport { b } from "../../components/ui/button";\nexport { a, b };\n`)).toEqual([`1: ${RULE}`, `2: ${RULE}`]);
  });

  it("an area uses another area's services, not its router, operations, tasks or internal modules", async () => {
    const code = [
      `import { a } from "../controlPlane/router";`,
      `import { b } from "@/server/provenance/operations";`,
      `import { c } from "../worker/tasks";`,
      `import { d } from "../ledger/internal/x";`,
      `import { e } from "../controlPlane/orgs";`,
      `import { f } from "./router";`,
      `export { a, b, c, d, e, f };`,
    ].join("\n");
    expect(await refusals("server/identity/probe.ts", code)).toEqual([1, 2, 3, 4].map((l) => `${l}: ${RULE}`));
  });

  it("each registry imports what it registers", async () => {
    expect(await refusals("server/trpc/probe.ts", `import { a } from "../identity/router";\nimport { b } from "../identity/operations";\nexport { a, b };\n`)).toEqual([]);
    expect(await refusals("server/http/probe.ts", `import { a } from "../identity/operations";\nexport { a };\n`)).toEqual([]);
    expect(await refusals("server/worker/probe.ts", `import { a } from "../identity/tasks";\nexport { a };\n`)).toEqual([]);
    expect(await refusals("server/worker/probe.ts", `import { a } from "../identity/router";\nexport { a };\n`)).toEqual([`1: ${RULE}`]);
  });

  it("components import server types and schemas only", async () => {
    const code = [
      `import { database } from "@/server/db/client";`,
      `import { listOrgs } from "../../server/controlPlane/orgs";`,
      `import type { AppRouter } from "@/server/trpc/root";`,
      `import { CpOrg } from "@/server/controlPlane/schemas";`,
      `export { database, listOrgs, CpOrg };`,
      `export type { AppRouter };`,
    ].join("\n");
    expect(await refusals("components/console/Probe.tsx", code)).toEqual([`1: ${RULE}`, `2: ${RULE}`]);
  });
});
