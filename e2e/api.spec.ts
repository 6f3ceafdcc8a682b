import { expect, mintApiKey, test } from "./fixtures";

test.describe("the production server", () => {
  test("governs /v1 through Next.js: key → call → revoke → refused", async ({ request }) => {
    const health = await request.get("/v1/health");
    expect(await health.json()).toMatchObject({ status: "ok", version: "1.0.0", database: "sqlite" });

    const key = mintApiKey();
    const auth = { Authorization: `Bearer ${key.token}` };
    const created = await request.post("/v1/passports", {
      headers: auth,
      data: {
        type: "agent",
        name: "e2e agent",
        public_key: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
      },
    });
    expect(created.status()).toBe(201);
    expect(created.headers()["x-ratelimit-limit"]).toBeTruthy();
    const did = (await created.json()).did;
    expect((await request.get(`/v1/passports/${did}`, { headers: auth })).status()).toBe(200);

    const unauth = await request.get("/v1/passports");
    expect(unauth.status()).toBe(401);
    expect(unauth.headers()["content-type"]).toContain("application/problem+json");

    const other = mintApiKey();
    const revoked = await request.post(`/v1/delegations/${key.delegation_id}/revoke`, {
      headers: { Authorization: `Bearer ${other.token}` },
    });
    expect(revoked.status()).toBe(201);
    expect((await request.get(`/v1/passports/${did}`, { headers: auth })).status()).toBe(401);
  });

  test("the in-process worker signs a checkpoint covering the calls within a second or so", async ({ request }) => {
    const key = mintApiKey();
    const auth = { Authorization: `Bearer ${key.token}` };
    const records = await request.get("/v1/provenance?limit=1", { headers: auth });
    const newest = (await records.json()).data[0];
    await expect
      .poll(
        async () => {
          const proof = await request.get(`/v1/provenance/${newest.id}/proof`, { headers: auth });
          return proof.status();
        },
        { timeout: 5_000, intervals: [200] },
      )
      .toBe(200);
    const note = await (await request.get("/v1/provenance/checkpoint", { headers: auth })).text();
    expect(note).toMatch(/^svc\.ledger\/\S+\n\d+\n\S{44}\n\n— /);
  });
});
