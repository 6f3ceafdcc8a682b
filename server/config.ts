import { isAbsolute, join, resolve } from "node:path";

/**
 * Every setting svc reads from the environment, parsed once. README.md's configuration table
 * lists the same variables; keep the two together.
 */
export interface Config {
  port: number;
  dataDir: string;
  /** `file:<path>` for SQLite, `postgres://` / `postgresql://` for PostgreSQL. */
  databaseUrl: string;
  engine: "sqlite" | "postgresql";
  publicUrl: string;
  issuer: string;
  audience: string;
  /** Requests per minute per credential and route. */
  rateLimitPerMinute: number;
  /** Requests per minute per client address and route, for calls without a valid credential. */
  rateLimitAnonymousPerMinute: number;
  maxBodyBytes: number;
  /** Run the background worker inside the web process. */
  inProcessWorker: boolean;
  /** SVC_OUTBOUND_ALLOW, raw: non-public destinations outbound calls may reach (server/outbound/allowList.ts parses it). */
  outboundAllow: string;
}

function int(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export function loadConfig(): Config {
  const port = int("PORT", 3000, 1, 65535);
  const dataDirRaw = process.env.DATA_DIR || "./data";
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(/* turbopackIgnore: true */ process.cwd(), dataDirRaw);
  const databaseUrl = process.env.DATABASE_URL || `file:${join(dataDir, "svc.db")}`;
  const engine = /^postgres(ql)?:\/\//.test(databaseUrl) ? "postgresql" : "sqlite";
  if (engine === "sqlite" && !databaseUrl.startsWith("file:")) {
    throw new Error(`DATABASE_URL must be a postgres:// URL or a file: path, got ${JSON.stringify(databaseUrl)}`);
  }
  const publicUrl = (process.env.SVC_PUBLIC_URL || `http://localhost:${port}`).replace(/\/$/, "");
  return {
    port,
    dataDir,
    databaseUrl,
    engine,
    publicUrl,
    issuer: process.env.SVC_ISSUER || "svc",
    audience: process.env.SVC_AUDIENCE || "svc-api",
    rateLimitPerMinute: int("SVC_RATE_LIMIT_PER_MINUTE", 600, 1, 100_000_000),
    rateLimitAnonymousPerMinute: int("SVC_RATE_LIMIT_ANONYMOUS_PER_MINUTE", 120, 1, 100_000_000),
    maxBodyBytes: int("SVC_MAX_BODY_BYTES", 1_048_576, 1024, 100 * 1_048_576),
    inProcessWorker: process.env.SVC_IN_PROCESS_WORKER !== "0",
    outboundAllow: process.env.SVC_OUTBOUND_ALLOW ?? "",
  };
}

let cached: Config | undefined;

/** The process's configuration, read from the environment on first use. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/** Forget the parsed configuration (tests that change the environment). */
export function resetConfig(): void {
  cached = undefined;
}
