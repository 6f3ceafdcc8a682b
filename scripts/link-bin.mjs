// Links the project's own command line into node_modules/.bin (run at npm install), which is how
// `npx svc` finds it in the project's directory. The package declares no `bin` on purpose: npm 11's
// npx installs a project whose own `bin` matches into npx's cache before running it (running this
// postinstall again, a minute or more on a busy machine, with a fresh cache every time); from
// node_modules/.bin it runs at once. From any other directory `npx svc` would fetch an unrelated
// registry package named `svc`: there, use `node <project>/bin/svc.mjs`.
import { chmodSync, lstatSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const binDir = join(root, "node_modules/.bin");
const link = join(binDir, "svc");
mkdirSync(binDir, { recursive: true });
try {
  lstatSync(link);
  rmSync(link);
} catch {
  // not linked yet
}
symlinkSync("../../bin/svc.mjs", link);
chmodSync(join(root, "bin/svc.mjs"), 0o755);
