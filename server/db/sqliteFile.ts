import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

/**
 * The SQLite database holds every delegation, passkey and provenance record: like the signing
 * keys, it is readable by the service's own user only. Its directory is created 0700 and the
 * file 0600 before SQLite opens it; SQLite gives the -wal and -shm files the database file's
 * permissions, and `tightenSqliteFiles` re-applies 0600 after opening for a database created by
 * an older version. A directory that already existed (say, a shared /srv) is left as it is: only
 * what svc creates is svc's to restrict.
 */
export function prepareSqliteFile(url: string): string {
  const file = url.replace(/^file:/, "");
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, "a", 0o600));
  return file;
}

/** Restricts the database file and its -wal/-shm companions to the owner (each may not exist yet). */
export function tightenSqliteFiles(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(path, 0o600);
    } catch {
      // Absent (no write yet) or not ours: nothing to tighten.
    }
  }
}
