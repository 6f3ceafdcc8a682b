#!/usr/bin/env node
// Renders prisma/schema.prisma once per provider and generates a Prisma Client for each.
// Prisma 7's query compiler is per provider, so SQLite and PostgreSQL each get their own client
// from the same models. Where Prisma could not download its schema engine (a machine without
// access to Prisma's binaries host), `prisma generate` still works when
// PRISMA_SCHEMA_ENGINE_BINARY names any executable: generate never runs it. We only set it when
// the real engine is absent: detect, don't override.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = readFileSync(join(root, "prisma/schema.prisma"), "utf8");
const providers = ["sqlite", "postgresql"];

function engineEnv() {
  if (process.env.PRISMA_SCHEMA_ENGINE_BINARY) return {};
  const enginesDir = join(root, "node_modules/@prisma/engines");
  const present = existsSync(enginesDir) && readdirSync(enginesDir).some((f) => f.startsWith("schema-engine"));
  return present ? {} : { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath };
}

for (const provider of providers) {
  const outDir = join(root, "prisma/generated", provider);
  mkdirSync(outDir, { recursive: true });
  const rendered = source
    .replace('provider = "sqlite"', `provider = "${provider}"`)
    .replace(
      'output       = "../server/db/generated/sqlite"',
      `output       = "../../../server/db/generated/${provider}"`,
    );
  const schemaPath = join(outDir, "schema.prisma");
  writeFileSync(
    schemaPath,
    `// Generated from prisma/schema.prisma by scripts/prisma-generate.mjs. Do not edit.\n${rendered}`,
  );
  execFileSync(
    process.execPath,
    [join(root, "node_modules/prisma/build/index.js"), "generate", "--schema", schemaPath, "--no-hints"],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ...engineEnv(), PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    },
  );
}
