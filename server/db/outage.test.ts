import { afterEach, describe, expect, it } from "vitest";
import { clearOutage, currentOutage, outageKind, reportOutage, setOutageLog } from "./outage";
import { toDomainError } from "../errors";

// The shapes these errors take, as node-postgres, Prisma's adapters and better-sqlite3 throw them.
const pgTerminated = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
const prismaRefused = Object.assign(
  new Error('Database error. Code: `55000`. Message: `database "x" is not currently accepting connections`'),
  {
    code: "P2039",
    meta: {
      driverAdapterError: {
        name: "DriverAdapterError",
        cause: { kind: "postgres", code: "55000", message: 'database "x" is not currently accepting connections' },
      },
    },
  },
);
const notQueryable = new Error("Client has encountered a connection error and is not queryable");
const sqliteFull = Object.assign(
  new Error("Raw query failed. Code: `SQLITE_FULL`. Message: `database or disk is full`"),
  { code: "P2010" },
);
const sqliteBusy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });

describe("outages", () => {
  afterEach(() => clearOutage());

  it("tells the database going away or filling up from every other error", () => {
    expect(outageKind(pgTerminated)).toBe("database_unavailable");
    expect(outageKind(prismaRefused)).toBe("database_unavailable");
    expect(outageKind(notQueryable)).toBe("database_unavailable");
    expect(outageKind(Object.assign(new Error("x"), { code: "08006" }))).toBe("database_unavailable");
    expect(outageKind(Object.assign(new Error("x"), { code: "57P03" }))).toBe("database_unavailable");
    expect(outageKind(new Error("wrapped", { cause: Object.assign(new Error("read"), { code: "ECONNRESET" }) }))).toBe(
      "database_unavailable",
    );
    expect(outageKind(sqliteBusy)).toBe("database_unavailable");
    expect(outageKind(sqliteFull)).toBe("storage_full");
    expect(outageKind(Object.assign(new Error("could not extend file"), { code: "53100" }))).toBe("storage_full");
    expect(outageKind(new Error("Cannot read properties of undefined"))).toBeUndefined();
    expect(outageKind(Object.assign(new Error("unique"), { code: "P2002" }))).toBeUndefined();
    expect(outageKind(Object.assign(new Error("syntax"), { code: "42601" }))).toBeUndefined();
  });

  it("answers an outage 503 with Retry-After and no incident, and logs it once however many calls meet it", () => {
    const lines: string[] = [];
    const previous = setOutageLog((l) => lines.push(l));
    try {
      for (let i = 0; i < 50; i++) {
        const mapped = toDomainError(i % 2 ? pgTerminated : notQueryable);
        expect(mapped.status).toBe(503);
        expect(mapped.code).toBe("database_unavailable");
        expect(mapped.extra.headers?.["Retry-After"]).toBe("1");
      }
      expect(toDomainError(sqliteFull)).toMatchObject({ status: 503, code: "storage_full" });
      expect(currentOutage()?.kind).toBe("storage_full");
      clearOutage();
      expect(lines.filter((l) => l.includes("outage started"))).toHaveLength(1);
      expect(lines.filter((l) => l.includes("outage ended"))).toHaveLength(1);
      expect(lines.find((l) => l.includes("outage ended"))).toMatch(/51 call\(s\) met it/);
      // Calls that failed before the end was noticed are the outage's tail, not a new one.
      reportOutage("storage_full", sqliteFull);
      expect(currentOutage()).toBeUndefined();
    } finally {
      setOutageLog(previous);
    }
  });

  it("is still a 500 incident for anything else", () => {
    expect(toDomainError(new Error("a bug")).status).toBe(500);
  });
});
