#!/usr/bin/env node
// `npx svc …`: the operator's command line (migrate, API keys, signing keys). It runs the CLI
// compiled once into dist/cli/svc.mjs (scripts/build-cli.mjs), rebuilt here first when missing or
// older than any source it was built from, so the CLI and the server share one implementation
// without compiling TypeScript at every call. Without esbuild it falls back to tsx.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bundle = join(root, "dist/cli/svc.mjs");
const inputs = join(root, "dist/cli/inputs.json");

function fresh() {
  if (!existsSync(bundle) || !existsSync(inputs)) return false;
  const built = statSync(bundle).mtimeMs;
  try {
    return JSON.parse(readFileSync(inputs, "utf8")).every((f) => statSync(join(root, f)).mtimeMs <= built);
  } catch {
    return false; // a source was removed or renamed
  }
}

let compiled = fresh();
if (!compiled && process.env.SVC_CLI_FROM_SOURCE !== "1") {
  try {
    const { buildCli } = await import("../scripts/build-cli.mjs");
    await buildCli();
    compiled = true;
  } catch (e) {
    console.error(`svc: could not compile the command line (${e.message.split("\n")[0]}); running it from source`);
  }
}
if (compiled && process.env.SVC_CLI_FROM_SOURCE !== "1") {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../server/cli/main.ts");
}
