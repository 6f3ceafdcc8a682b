import { isAbsolute, resolve } from "node:path";

/**
 * The `npx svc …` command an operator must type to act on *this* server: prefixed with the
 * server's DATA_DIR / DATABASE_URL when they are not the defaults, so the command does not
 * quietly open (and, with --init, create) another database. The password of a PostgreSQL URL is
 * never printed; the operator puts it back (or sets PGPASSWORD).
 */
const DEFAULT_DATA_DIR = "./data";

function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

export function cliCommand(
  args: string,
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): string {
  const prefix: string[] = [];
  const dataDir = env.DATA_DIR;
  if (dataDir && resolve(cwd, dataDir) !== resolve(cwd, DEFAULT_DATA_DIR))
    prefix.push(`DATA_DIR=${shellQuote(isAbsolute(dataDir) ? dataDir : resolve(cwd, dataDir))}`);
  if (env.DATABASE_URL) {
    let url = env.DATABASE_URL;
    if (/^postgres(ql)?:\/\//.test(url)) {
      const parsed = new URL(url);
      if (parsed.password) parsed.password = "<password>";
      url = parsed.toString().replace("%3Cpassword%3E", "<password>");
    }
    prefix.push(`DATABASE_URL=${shellQuote(url)}`);
  }
  // Keys the server takes from the environment must reach the CLI too, or a key it mints is signed
  // by a key the server does not know.
  const shared = ["SVC_SIGNING_KEYS", "SVC_SECRET", "SVC_LEDGER_KEYS"].filter((v) => env[v]);
  const note = shared.length ? `   # with this server's ${shared.join(", ")} in the environment` : "";
  return `${[...prefix, "npx svc", args].join(" ")}${note}`;
}

/** What the first start prints for API clients: the command for this server, then a first call. */
export function apiClientHint(
  publicUrl: string,
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): string[] {
  return [
    "API clients: mint the first API key with (from this directory; the command names this server's database)",
    `    ${cliCommand("keys create", env, cwd)}`,
    `and call the API with it, e.g. curl -H "Authorization: Bearer <token>" ${publicUrl}/v1/passports`,
  ];
}
