import { generateKeyPairSync } from "node:crypto";
import type { Page } from "@playwright/test";
import { adminContext, checkPage, expect, mintApiKey, test, themedAdminContext, THEMES_AND_WIDTHS } from "./fixtures";

/**
 * Issue 31's console journey: a key holding six capabilities, seeded through the API, calls with
 * two of them → its page shows the two used (with their counts) and the four unused → simulating
 * a grant without one of the used ones refuses exactly its calls, each example linked to its
 * provenance record → a narrowing proposal made through the API shows on the page, linked to the
 * learning page and the approval inbox → the overview lists keys holding high-risk capabilities
 * they do not use. Then the page light and dark, at 1280 and 390 px. Named to sort after
 * console.spec.ts, whose first journey sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

const SIX = [
  "svc_api:passports:read",
  "svc_api:agents:read",
  "svc_api:delegations:read",
  "svc_api:delegations:write",
  "svc_api:events:read",
  "svc_api:prompts:read",
];
const NAME = "least-privilege e2e key";
let keyId = "";

/** Simulates keeping passports:read alone (agents:read unticked) and waits for the result. */
async function simulateWithoutAgentsRead(page: Page): Promise<void> {
  const keep = page.getByRole("group", { name: "Keep" });
  await expect(keep.getByRole("checkbox", { name: /svc_api:passports:read/ })).toBeChecked();
  await expect(keep.getByRole("checkbox", { name: /svc_api:events:read/ })).not.toBeChecked();
  await keep.getByRole("checkbox", { name: /svc_api:agents:read/ }).uncheck();
  await page.getByRole("button", { name: "Simulate", exact: true }).click();
  await expect(page.getByTestId("would-refuse")).toHaveText("2");
  await expect(page.getByTestId("would-allow")).toHaveText("3");
}

test("a key calls with 2 of its 6 capabilities → its page shows used and unused → simulate narrowing → the examples link to their records → the open proposal → needs attention", async ({
  browser,
  request,
}) => {
  test.setTimeout(120_000);
  const admin = { Authorization: `Bearer ${mintApiKey("svc_api:*").token}` };
  const { publicKey } = generateKeyPairSync("ed25519");
  const passport = await request.post("/v1/passports", {
    headers: admin,
    data: { type: "agent", name: "least-privilege e2e agent", public_key: publicKey.export({ format: "jwk" }) },
  });
  expect(passport.status(), await passport.text()).toBe(201);
  const grant = await request.post("/v1/delegation-tokens", {
    headers: admin,
    data: { delegate_did: (await passport.json()).did, capabilities: SIX, duration_seconds: 3600, name: NAME },
  });
  expect(grant.status(), await grant.text()).toBe(201);
  const key = (await grant.json()) as { delegation_id: string; token: string };
  keyId = key.delegation_id;
  const asKey = { Authorization: `Bearer ${key.token}` };
  for (let i = 0; i < 3; i++) expect((await request.get("/v1/passports", { headers: asKey })).status()).toBe(200);
  for (let i = 0; i < 2; i++) expect((await request.get("/v1/agents", { headers: asKey })).status()).toBe(200);

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // The key's row in the list links to its page.
  await page.goto("/keys");
  await page.getByLabel("Kind").selectOption("delegation_token");
  await page.getByRole("link", { name: NAME }).click();
  await expect(page).toHaveURL(new RegExp(`/keys/${keyId}$`));
  await expect(page.getByRole("heading", { name: NAME, level: 1 })).toBeVisible();

  // Granted vs used: two used with their counts, four unused.
  const usage = page.getByRole("region", { name: "Capabilities granted and used" });
  const row = (c: string) => usage.getByRole("row").filter({ hasText: c });
  await expect(row("svc_api:passports:read").getByRole("cell").nth(1)).toHaveText("3");
  await expect(row("svc_api:agents:read").getByRole("cell").nth(1)).toHaveText("2");
  for (const c of SIX.slice(2)) await expect(row(c).getByText("unused", { exact: true })).toBeVisible();
  await expect(row("svc_api:passports:read").getByText("unused", { exact: true })).toHaveCount(0);
  await expect(page.getByTestId("usage-summary")).toContainText("2 capabilities used in the window, 4 held and unused");
  await expect(page.getByTestId("usage-summary")).toContainText("0 derived delegations counted in");
  await expect(page.getByTestId("narrowing-proposal")).toContainText("No open narrowing proposal");
  await checkPage(page, "lp-01-key-usage-1280-light");

  // Simulate keeping passports:read alone: the two agents reads would be refused, each linked to its record.
  await simulateWithoutAgentsRead(page);
  const examples = page.getByRole("region", { name: "Calls the narrower grant would refuse" });
  await expect(examples.getByRole("row").filter({ hasText: "GET /v1/agents" })).toHaveCount(2);
  const recordLink = examples.getByRole("link").first();
  await expect(recordLink).toHaveAttribute("href", /^\/provenance\?record=prv_/);
  await checkPage(page, "lp-02-simulated-1280-light");
  const recordId = (await recordLink.textContent())!.trim();
  await recordLink.click();
  await expect(page).toHaveURL(/\/provenance\?record=prv_/);
  await expect(page.getByRole("dialog").getByText(recordId).first()).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("dialog")).toContainText("GET /v1/agents");
  await page.goBack();

  // The usage window is in the URL.
  await page.getByLabel("Window").selectOption("7");
  await expect(page).toHaveURL(/days=7/);
  await expect(row("svc_api:passports:read").getByRole("cell").nth(1)).toHaveText("3");

  // A narrowing proposal (through the API) shows on the page, linked to where it is decided.
  const proposed = await request.post("/v1/svcos/learning/proposals", {
    headers: admin,
    data: {
      kind: "delegation_narrowing",
      target: keyId,
      proposed: { capabilities: SIX.slice(0, 2) },
      explain: {
        source: "admin",
        confidence: 0.9,
        scope: `delegation:${keyId}`,
        // The usage window as the worker cites it: the learning page links it to the key's page.
        evidence_refs: [
          `stats:delegation_usage?${new URLSearchParams({
            delegation_id: keyId,
            from: new Date(Date.now() - 86_400_000).toISOString(),
            to: new Date(Date.now() + 60_000).toISOString(),
          })}`,
        ],
      },
    },
  });
  expect(proposed.status(), await proposed.text()).toBe(201);
  const proposal = (await proposed.json()) as { id: string; approval_id: string };
  await page.reload();
  const open = page.getByTestId("narrowing-proposal");
  await expect(open).toContainText("pending");
  await expect(open.getByRole("link", { name: "The proposal and its evidence" })).toHaveAttribute(
    "href",
    `/learning?id=${proposal.id}`,
  );
  await expect(open.getByRole("link", { name: "Its request in the approval inbox" })).toHaveAttribute(
    "href",
    `/approvals?id=${proposal.approval_id}`,
  );
  await checkPage(page, "lp-03-proposal-1280-light");
  await open.getByRole("link", { name: "The proposal and its evidence" }).click();
  const detail = page.getByLabel("Proposal detail");
  await expect(detail.getByRole("link", { name: keyId }).first()).toHaveAttribute("href", `/keys/${keyId}`);
  await expect(detail).toContainText(`Usage of ${keyId}`);
  await checkPage(page, "lp-04-learning-1280-light");
  await page.goBack();
  await open.getByRole("link", { name: "Its request in the approval inbox" }).click();
  await expect(page.getByText(`delegation_narrowing of ${keyId}`).first()).toBeVisible({ timeout: 20_000 });
  await checkPage(page, "lp-04-approval-1280-light");

  // The overview lists keys holding high-risk capabilities they do not use (this one holds delegations:write).
  await page.goto("/overview");
  const attention = page.getByTestId("attention");
  await expect(
    attention.getByRole("link", { name: /holds high-risk capabilities it has not used/ }).first(),
  ).toBeVisible({
    timeout: 20_000,
  });
  await checkPage(page, "lp-05-overview-attention");
  expect(errors).toEqual([]);
  await context.close();
});

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`a key's page in ${colorScheme} at ${viewport.width} px, simulated: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    await page.goto(`/keys/${keyId}`);
    await expect(page.getByRole("heading", { name: NAME, level: 1 })).toBeVisible();
    await expect(page.getByTestId("usage-summary")).toBeVisible({ timeout: 20_000 });
    await simulateWithoutAgentsRead(page);
    await checkPage(page, `lp-06-key-${viewport.width}-${colorScheme}`);
    await page.getByRole("link", { name: "Its request in the approval inbox" }).click();
    await expect(page.getByText(`delegation_narrowing of ${keyId}`).first()).toBeVisible({ timeout: 20_000 });
    await checkPage(page, `lp-07-approval-${viewport.width}-${colorScheme}`);
    await page.goto("/overview");
    await expect(page.getByTestId("attention")).toBeVisible({ timeout: 20_000 });
    await checkPage(page, `lp-08-overview-${viewport.width}-${colorScheme}`);
    await context.close();
  });
}
