import { readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The files under `dir` (recursively, skipping `generated` folders) whose names `isSource`
 * accepts, in directory-walk order.
 */
export function sourceFiles(dir: string, isSource: (name: string) => boolean): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, e.name);
      if (e.isDirectory()) {
        if (e.name !== "generated") walk(path);
      } else if (isSource(e.name)) files.push(path);
    }
  };
  walk(dir);
  return files;
}

/** The server's TypeScript modules (`.ts`, `.tsx`), tests left out. */
export const serverModules = (): string[] =>
  sourceFiles(join(process.cwd(), "server"), (name) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name));
