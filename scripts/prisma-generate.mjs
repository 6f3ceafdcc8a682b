#!/usr/bin/env node
// Renders the multi-file schema in prisma/schema/ (main.prisma: generator and datasource; one
// <area>.prisma per area) once per provider into prisma/generated/<provider>/schema/ and generates
// a Prisma Client for each. Prisma 7's query compiler is per provider, so SQLite and PostgreSQL each
// get their own client from the same models. Prisma reads every .prisma file of the folder given to
// `--schema`. Where Prisma could not download its schema engine (a machine without access to
// Prisma's binaries host), `prisma generate` still works when PRISMA_SCHEMA_ENGINE_BINARY names any
// executable: generate never runs it. We only set it when the real engine is absent: detect, don't
// override.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const schemaDir = join(root, "prisma/schema");
const files = readdirSync(schemaDir)
  .filter((f) => f.endsWith(".prisma"))
  .sort();
const providers = ["sqlite", "postgresql"];

function engineEnv() {
  if (process.env.PRISMA_SCHEMA_ENGINE_BINARY) return {};
  const enginesDir = join(root, "node_modules/@prisma/engines");
  const present = existsSync(enginesDir) && readdirSync(enginesDir).some((f) => f.startsWith("schema-engine"));
  return present ? {} : { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath };
}

for (const provider of providers) {
  const outDir = join(root, "prisma/generated", provider);
  // The single-file rendering of earlier versions would be read beside the folder: remove it.
  rmSync(join(outDir, "schema.prisma"), { force: true });
  const renderedDir = join(outDir, "schema");
  rmSync(renderedDir, { recursive: true, force: true });
  mkdirSync(renderedDir, { recursive: true });
  for (const file of files) {
    let text = readFileSync(join(schemaDir, file), "utf8");
    if (file === "main.prisma") {
      const rendered = text
        .replace('provider = "sqlite"', `provider = "${provider}"`)
        .replace(
          'output       = "../../server/db/generated/sqlite"',
          `output       = "../../../../server/db/generated/${provider}"`,
        );
      if (rendered === text && provider !== "sqlite")
        throw new Error("prisma/schema/main.prisma: provider or output not found");
      text = rendered;
    }
    writeFileSync(
      join(renderedDir, file),
      `// Generated from prisma/schema/${file} by scripts/prisma-generate.mjs. Do not edit.\n${text}`,
    );
  }
  execFileSync(
    process.execPath,
    [join(root, "node_modules/prisma/build/index.js"), "generate", "--schema", renderedDir, "--no-hints"],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ...engineEnv(), PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    },
  );
}
