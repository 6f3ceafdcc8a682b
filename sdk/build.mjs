// Builds the SDK into dist/: one ES module (esbuild; its only dependency, canonicalize, is bundled
// in, so the package installs with no dependency at all) and the type declarations (tsc). Run by
// `npm run build` and by `npm pack` (prepack). esbuild and typescript come from the repository's
// node_modules.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const require = createRequire(import.meta.url);
rmSync(`${here}dist`, { recursive: true, force: true });
const { build } = await import("esbuild");
await build({
  absWorkingDir: here,
  entryPoints: ["src/index.ts"],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile: "dist/index.js",
  logLevel: "error",
});
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json"], {
  cwd: here,
  stdio: "inherit",
});
