import { describe, expect, it } from "vitest";
import { apiKey, call, ed25519Jwk, lastProvenance, useTestServer } from "./harness";

const t = useTestServer();

const api = (method: string, path: string, token: string | undefined, body?: unknown) =>
  call(t.server.url, method, path, { token, body });

/** A tenant created by the root organization with the given settings, and a key of its own. */
async function tenant(name: string, settings: Record<string, unknown> = {}) {
  const passport = await api("POST", "/v1/passports", t.root.token, {
    type: "organization",
    name,
    public_key: ed25519Jwk(),
  });
  const org = await api("POST", "/v1/cp/orgs", t.root.token, { org_did: passport.body.did, name, ...settings });
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  return { did: passport.body.did as string, key: await apiKey(["svc_api:*"], passport.body.did) };
}

describe("who decides an organization's settings", () => {
  it("a child organization cannot rewrite what its parent set: 403 naming the fields and who decides them", async () => {
    const b = await tenant("Child B", {
      data_residency_tier: "local_only",
      autonomy_profile: "paranoid",
      deployment_mode: "self_hosted",
    });
    for (const change of [
      { data_residency_tier: "global" },
      { autonomy_profile: "aggressive" },
      { deployment_mode: "cloud" },
      { data_residency_tier: null },
      { name: "B", autonomy_profile: "balanced" },
    ]) {
      const res = await api("PATCH", `/v1/cp/orgs/${b.did}`, b.key.token, change);
      expect(res.status, JSON.stringify(change)).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 403,
        fields: Object.keys(change).filter((k) => k !== "name"),
        decided_by: t.root.orgDid,
      });
      expect(res.body.detail).toMatch(/organization that created it/);
      const record = await lastProvenance();
      expect(record).toMatchObject({ decision: "denied", status: 403, resourceId: b.did });
    }
    // Nothing changed.
    const after = await api("GET", `/v1/cp/orgs/${b.did}`, b.key.token);
    expect(after.body).toMatchObject({
      name: "Child B",
      data_residency_tier: "local_only",
      autonomy_profile: "paranoid",
      deployment_mode: "self_hosted",
    });
  });

  it("the child may rename itself, and may send a governed field unchanged", async () => {
    const b = await tenant("Child C", { data_residency_tier: "regional" });
    const res = await api("PATCH", `/v1/cp/orgs/${b.did}`, b.key.token, {
      name: "Child C, renamed",
      data_residency_tier: "regional",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ name: "Child C, renamed", data_residency_tier: "regional" });
  });

  it("the parent changes them, and the root organization changes its own", async () => {
    const b = await tenant("Child D", { data_residency_tier: "local_only" });
    const res = await api("PATCH", `/v1/cp/orgs/${b.did}`, t.root.token, {
      data_residency_tier: "global",
      autonomy_profile: "balanced",
      deployment_mode: "hybrid",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      data_residency_tier: "global",
      autonomy_profile: "balanced",
      deployment_mode: "hybrid",
    });
    const own = await api("PATCH", `/v1/cp/orgs/${t.root.orgDid}`, t.root.token, { autonomy_profile: "balanced" });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.autonomy_profile).toBe("balanced");
  });
});

describe("listing organizations", () => {
  it("pages through the caller's own and the ones it created, without gaps or repeats", async () => {
    for (let i = 0; i < 3; i++) await tenant(`Paged ${i}`);
    const all = (await api("GET", "/v1/cp/orgs?limit=100", t.root.token)).body.data.map(
      (o: { org_did: string }) => o.org_did,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await api(
        "GET",
        `/v1/cp/orgs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        t.root.token,
      );
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((o: { org_did: string }) => o.org_did));
      cursor = res.body.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(all.length).toBeGreaterThanOrEqual(4);
  });
});
