import type { Page } from "@playwright/test";
import { startOAuthProvider, type OAuthProviderPeer } from "../tests/integration/peers/oauthProvider";
import { adminContext, axe, expect, shot, slowNavigations, test } from "./fixtures";

/**
 * The marketplace as an administrator uses it: the store, a connector's page, an install through
 * the browser with the provider's real consent screen (oidc-provider on loopback, whose connector
 * definition playwright.config.ts hands the server), back to the installation, an invocation from
 * the console with its answer and usage, a rating. Axe on every new page, light and dark; the
 * store fits at 390 px. Runs after console.spec.ts (its own project, playwright.config.ts), whose first
 * journey sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

let peer: OAuthProviderPeer;
const port = Number(process.env.E2E_PORT || 3199);

test.beforeAll(async () => {
  peer = await startOAuthProvider({
    port: Number(process.env.E2E_OAUTH_PEER_PORT),
    redirectUris: [`http://localhost:${port}/v1/marketplace/oauth/callback`],
  });
});
test.afterAll(async () => {
  await peer?.close();
});

async function noSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, page.url()).toBeLessThanOrEqual(1);
}

test("store → connector → install with the provider's consent → back → invoke from the console → usage and rating", async ({
  browser,
}) => {
  test.setTimeout(240_000);
  const { context, page } = await adminContext(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto("/marketplace");
  await expect(page.getByRole("heading", { name: "Marketplace", level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: "GitHub" })).toBeVisible({ timeout: 30_000 });
  await shot(page, "marketplace-01-store");
  await axe(page);

  await page.getByLabel("Search").fill("loopback");
  await expect(page.getByRole("link", { name: "GitHub" })).toHaveCount(0);
  await expect(page).toHaveURL(/q=loopback/);
  await page.getByRole("link", { name: "Loopback OAuth" }).click();
  await expect(page.getByRole("heading", { name: "Loopback OAuth", level: 1 })).toBeVisible();
  await expect(page.getByText("offline_access")).toBeVisible();
  await shot(page, "marketplace-02-connector");
  await axe(page);

  await page.getByRole("button", { name: "Install" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  await dialog.getByLabel("workspace").fill("acme");
  await shot(page, "marketplace-03-install-dialog");
  await axe(page);
  await dialog.getByRole("button", { name: /Continue to/ }).click();

  // The provider's own pages: sign in, then consent.
  await page.waitForURL((u) => u.port === String(process.env.E2E_OAUTH_PEER_PORT), { timeout: 30_000 });
  // Before leaving, the console bound the authorization to this browser (RFC 9700 §4.7): an
  // HttpOnly cookie for the callback's path only, which the callback requires.
  const binding = (await page.context().cookies()).find((c) => c.name.startsWith("svc_oauth_"));
  expect(binding).toMatchObject({ path: "/v1/marketplace/oauth/callback", httpOnly: true, sameSite: "Lax" });
  await page.locator('input[name="login"]').fill("ada");
  await page.locator('input[name="password"]').fill("any");
  await shot(page, "marketplace-04-provider-login");
  await page.getByRole("button", { name: /sign-?in/i }).click();
  await expect(page.getByRole("button", { name: /continue/i })).toBeVisible();
  await shot(page, "marketplace-05-provider-consent");
  await page.getByRole("button", { name: /continue/i }).click();

  await page.waitForURL(/\/marketplace\/installations\/ins_[^?]+\?oauth=connected/, { timeout: 30_000 });
  await expect(page.getByRole("status").filter({ hasText: "Connected to" })).toBeVisible();
  await expect(page.getByText("active").first()).toBeVisible();
  await shot(page, "marketplace-06-installed");
  await axe(page);

  // Invoke `me` from the console: the provider's API answers with the token's subject.
  await expect(page.getByLabel("Action")).toHaveValue("me");
  await page.getByRole("button", { name: "Invoke" }).click();
  await expect(page.getByText("HTTP 200")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByLabel("The provider's answer")).toContainText('"sub"');
  await page.getByLabel("Action").selectOption("echo");
  await page.getByLabel("message").fill("hello from the console");
  await page.getByRole("button", { name: "Invoke" }).click();
  await expect(page.getByLabel("The provider's answer")).toContainText("hello from the console");
  // The invocation's provenance record is the record (prv_…), opened in the explorer, not the usage id.
  const record = page.getByTestId("invocation-record");
  await expect(record).toContainText(/prv_/);
  await expect(record).not.toContainText("civ_");
  expect(peer.apiRequests.map((r) => r.path)).toEqual(expect.arrayContaining(["/api/me", "/api/echo"]));
  // The usage figures come from the invocation records.
  await expect(page.getByRole("definition").filter({ hasText: /^2$/ }).first()).toBeVisible({ timeout: 15_000 });
  await shot(page, "marketplace-07-invoked");
  const recordId = ((await record.textContent()) ?? "").match(/prv_[0-9a-z]+/)![0];
  await record.click();
  await expect(page.getByRole("dialog")).toContainText(recordId, { timeout: 15_000 });
  await shot(page, "marketplace-07a-invocation-record");

  await page.goto("/marketplace/installations");
  await expect(page.getByRole("link", { name: "Loopback OAuth" })).toBeVisible();
  await shot(page, "marketplace-08-installations");
  await axe(page);

  // The organization used it: it may rate it.
  await page.goto("/marketplace/loopback-oauth");
  await page.locator("label").filter({ hasText: "4 stars" }).click();
  await page.getByLabel("Review (optional)").fill("Consent and invoke, in two clicks.");
  await page.getByRole("button", { name: "Submit rating" }).click();
  await expect(page.getByText("Consent and invoke, in two clicks.")).toBeVisible();
  await shot(page, "marketplace-09-rated");

  // Dark mode: the new pages pass axe there too.
  await page.getByRole("button", { name: "Toggle dark mode" }).click();
  for (const path of ["/marketplace", "/marketplace/loopback-oauth", "/marketplace/installations"]) {
    await page.goto(path);
    await page.waitForLoadState("networkidle");
    await axe(page);
  }
  await shot(page, "marketplace-10-installations-dark");
  await page.goto("/marketplace/loopback-oauth");
  await page.waitForLoadState("networkidle");
  await shot(page, "marketplace-11-connector-dark");
  await context.close();

  // 390 px: the store and a connector's page fit.
  const narrow = await adminContext(browser, { viewport: { width: 390, height: 844 } });
  for (const path of ["/marketplace", "/marketplace/loopback-oauth"]) {
    await narrow.page.goto(path);
    await narrow.page.waitForLoadState("networkidle");
    await noSidewaysScroll(narrow.page);
  }
  await shot(narrow.page, "marketplace-12-connector-390");
  await narrow.context.close();
});

test("two filters changed in quick succession, on a slow network, both hold: in the URL and in the store", async ({
  browser,
}) => {
  const { context, page } = await adminContext(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto("/marketplace");
  await expect(page.getByRole("link", { name: "Notion" })).toBeVisible({ timeout: 30_000 });
  const pricing = page.getByRole("combobox", { name: "Pricing", exact: true });
  const certified = page.getByRole("combobox", { name: "Certified", exact: true });
  // The second filter is picked before the first has rendered: it builds on the first. Built from
  // the URL as last rendered, it put the pricing back to "Any".
  const stopHolding = await slowNavigations(page);
  await pricing.selectOption("free");
  await certified.selectOption("true");
  await expect(page).toHaveURL(
    (u) => u.searchParams.get("pricing_model") === "free" && u.searchParams.get("certified") === "true",
    { timeout: 15_000 },
  );
  await stopHolding();
  await expect(pricing).toHaveValue("free");
  await expect(certified).toHaveValue("true");
  // Free and certified: GitHub; not Notion (freemium) nor Loopback OAuth (not certified).
  await expect(page.getByRole("link", { name: "GitHub" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Notion" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Loopback OAuth" })).toHaveCount(0);
  await shot(page, "marketplace-13-two-filters");
  await context.close();
});
