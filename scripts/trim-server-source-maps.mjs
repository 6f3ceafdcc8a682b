#!/usr/bin/env node
// After `next build`: drops `sourcesContent` from the server bundle's source maps (.next/server).
// Node keeps the source map of every module it loads while source maps are on (tsx turns them on,
// and svc's own stack traces need them), and these maps carry a copy of every bundled source
// file: 55-60 MB of the server's resident memory at rest, about a sixth of it (issue 30's RSS
// target). The mappings stay, so stack traces still name the original file, line and column;
// only the copy of the sources goes (a debugger opens the files themselves). Idempotent.
// Run by scripts/start.mjs after its build and by `npm run build`.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(fileURLToPath(new URL(".", import.meta.url)), "..");

function* mapsUnder(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* mapsUnder(path);
    else if (entry.name.endsWith(".js.map")) yield path;
  }
}

/** Removes `sourcesContent` from a source map and from each section of an index map; whether anything was removed. */
function strip(map) {
  let removed = false;
  if (map && typeof map === "object") {
    if ("sourcesContent" in map) {
      delete map.sourcesContent;
      removed = true;
    }
    for (const section of Array.isArray(map.sections) ? map.sections : []) removed = strip(section.map) || removed;
  }
  return removed;
}

export function trimServerSourceMaps(dir = join(root, ".next/server")) {
  let files = 0;
  let saved = 0;
  for (const path of mapsUnder(dir)) {
    const text = readFileSync(path, "utf8");
    let map;
    try {
      map = JSON.parse(text);
    } catch {
      continue; // Not ours to judge: Node skips a map it cannot parse.
    }
    if (!strip(map)) continue;
    const out = JSON.stringify(map);
    writeFileSync(path, out);
    files++;
    saved += text.length - out.length;
  }
  return { files, savedBytes: saved };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, savedBytes } = trimServerSourceMaps();
  console.log(`svc: ${files} server source maps trimmed of their sources (${Math.round(savedBytes / 2 ** 20)} MB)`);
}
