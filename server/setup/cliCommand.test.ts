import { describe, expect, it } from "vitest";
import { apiClientHint, cliCommand } from "./cliCommand";

describe("the printed CLI command", () => {
  it("is bare for the default database", () => {
    expect(cliCommand("keys create", {}, "/srv/svc")).toBe("npx svc keys create");
    expect(cliCommand("keys create", { DATA_DIR: "./data" }, "/srv/svc")).toBe("npx svc keys create");
  });

  it("names the server's DATA_DIR (absolute) and DATABASE_URL (without the password)", () => {
    expect(cliCommand("keys create", { DATA_DIR: "./elsewhere" }, "/srv/svc")).toBe(
      "DATA_DIR=/srv/svc/elsewhere npx svc keys create",
    );
    expect(cliCommand("keys create", { DATA_DIR: "/var/lib/my svc" }, "/srv/svc")).toBe(
      "DATA_DIR='/var/lib/my svc' npx svc keys create",
    );
    const pg = cliCommand("keys create", { DATABASE_URL: "postgres://svc:s3cret@db.internal:5432/svc" }, "/srv/svc");
    expect(pg).toBe("DATABASE_URL='postgres://svc:<password>@db.internal:5432/svc' npx svc keys create");
    expect(pg).not.toContain("s3cret");
  });

  it("says which keys from the environment the CLI needs too", () => {
    expect(cliCommand("keys create", { SVC_SIGNING_KEYS: "[]", SVC_SECRET: "x" }, "/")).toMatch(
      /# with this server's SVC_SIGNING_KEYS, SVC_SECRET/,
    );
  });

  it("is what the first start prints for a server started as DATA_DIR=./elsewhere npm start", () => {
    expect(apiClientHint("http://localhost:3000", { DATA_DIR: "./elsewhere" }, "/srv/svc")).toContain(
      "    DATA_DIR=/srv/svc/elsewhere npx svc keys create",
    );
  });
});
