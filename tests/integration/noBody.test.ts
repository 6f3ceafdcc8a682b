import { describe, expect, it } from "vitest";
import { areaOperations as operations } from "@/server/areas";
import { call, useTestServer } from "./harness";

/**
 * Issue 26, item 17: operations that take no body (cancel, activate, rotate-secret, apply, …)
 * answer `{}` exactly as they answer nothing (many HTTP clients send `{}` when given no body), and
 * refuse a body with a field, naming it. The list comes from the operations registry, so a new
 * action route is covered without being named here.
 */
const t = useTestServer();

const withoutBody = operations.filter((op) => !op.body && op.method !== "GET");

// Ids that do not exist: the calls reach the handlers (404) without changing anything that matters.
const sample = (name: string) =>
  ({ did: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", org_did: "did:svc:missing" })[name] ??
  `${name}_missing`;

describe("operations without a body (issue 26, item 17)", () => {
  it("the registry has such operations (cancel, activate, deactivate, rotate-secret, apply, rollback, deprecate)", () => {
    const paths = withoutBody.map((op) => op.path);
    for (const action of ["cancel", "activate", "deactivate", "rotate-secret", "apply", "rollback", "deprecate"])
      expect(
        paths.some((p) => p.endsWith(`/${action}`)),
        action,
      ).toBe(true);
  });

  it("answer {} as they answer no body, and refuse a field by name", async () => {
    for (const op of withoutBody) {
      const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(sample(name)));
      const label = `${op.method} ${op.path}`;
      const none = await call(t.server.url, op.method, path, { token: t.root.token });
      const empty = await call(t.server.url, op.method, path, { token: t.root.token, body: {} });
      expect(empty.status, `${label}: ${JSON.stringify(empty.body)}`).toBe(none.status);
      if (none.status >= 400) expect(empty.body.type, label).toBe(none.body.type);

      const extra = await call(t.server.url, op.method, path, { token: t.root.token, body: { surplus: 1 } });
      expect(extra.status, label).toBe(400);
      // A path parameter the route refuses is named first; otherwise the field is.
      if (none.status !== 400)
        expect(extra.body.errors, label).toEqual([
          expect.objectContaining({ field: "surplus", code: "UNKNOWN_FIELD" }),
        ]);
    }
  });
});
