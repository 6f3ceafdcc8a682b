import type { Page } from "@playwright/test";
import { startOAuthProvider, type OAuthProviderPeer } from "../tests/integration/peers/oauthProvider";
import { axe, checkPage, expect, shot, test } from "./fixtures";

/**
 * Company sign-in: the sign-in page offers "Sign in with Example Corp" (SVC_OIDC_* in
 * playwright.config.ts), the provider (oidc-provider on loopback, its development login form) signs
 * the person in, and they land in the console with the role their group maps to; a person whose
 * groups map to no role is sent back to the sign-in page, told why. Light and dark, 1280 and 390 px.
 */
test.describe.configure({ mode: "serial" });

const port = Number(process.env.E2E_PORT || 3199);
let peer: OAuthProviderPeer;

test.beforeAll(async () => {
  peer = await startOAuthProvider({
    port: Number(process.env.E2E_OIDC_PEER_PORT),
    redirectUris: [`http://localhost:${port}/api/auth/callback/oidc`],
    clientId: "svc-console",
    clientSecret: "svc-console-secret-0123456789abcdef",
    tokenEndpointAuthMethod: "client_secret_basic",
    claims: (login) => ({
      name: login === "grace" ? "Grace Approver" : `Person ${login}`,
      email: `${login}@example.com`,
      groups: login === "grace" ? ["svc-approvers"] : ["contractors"],
    }),
  });
});
test.afterAll(() => peer?.close());

/** The provider's development login and consent forms, as the person fills them. */
async function signInAtProvider(page: Page, login: string) {
  await page.getByRole("button", { name: "Sign in with Example Corp" }).click();
  await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${process.env.E2E_OIDC_PEER_PORT}/interaction/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any");
  await page.locator('button[type="submit"]').click();
  // The provider asks for consent or sends the browser straight back: wait for whichever comes.
  // (`isVisible` does not wait, whatever its timeout says: on a loaded machine the consent page was
  // not there yet, and the journey went on without giving it.)
  const consent = page.locator('button[type="submit"]', { hasText: /continue/i });
  const provider = `http://127.0.0.1:${process.env.E2E_OIDC_PEER_PORT}/`;
  const asked = await Promise.race([
    consent.waitFor({ state: "visible", timeout: 30_000 }).then(
      () => true,
      () => false,
    ),
    page
      .waitForURL((url) => !url.href.startsWith(provider), { timeout: 30_000 })
      .then(
        () => false,
        () => false,
      ),
  ]);
  if (asked) await consent.click();
}

test("Sign in with Example Corp: a mapped group lands in the console with its role, an unmapped one is told why", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto("/sign-in");
  await expect(page.getByRole("button", { name: "Sign in with a passkey" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign in with Example Corp" })).toBeVisible();
  await axe(page);
  await shot(page, "80-company-sign-in");

  await signInAtProvider(page, "grace");
  await page.waitForURL(/\/overview/, { timeout: 30_000 });
  await expect(page.getByText("Grace Approver").first()).toBeVisible({ timeout: 20_000 });
  await axe(page);
  await shot(page, "81-company-signed-in");
  await context.close();

  const other = await browser.newContext();
  const refused = await other.newPage();
  await refused.goto("/sign-in");
  await signInAtProvider(refused, "mallory");
  await refused.waitForURL(/\/sign-in\?error=no_role/, { timeout: 30_000 });
  await expect(refused.getByText("none of its groups gives a console role")).toBeVisible();
  await axe(refused);
  await shot(refused, "82-company-sign-in-refused");
  await other.close();
});

for (const [colorScheme, viewport] of [
  ["light", { width: 1280, height: 900 }],
  ["dark", { width: 1280, height: 900 }],
  ["light", { width: 390, height: 844 }],
  ["dark", { width: 390, height: 844 }],
] as const) {
  test(`the sign-in page with company sign-in in ${colorScheme} at ${viewport.width} px: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const context = await browser.newContext({ colorScheme, viewport });
    await context.addInitScript(() => localStorage.setItem("theme", "system"));
    const page = await context.newPage();
    await page.goto("/sign-in?error=no_role");
    await expect(page.getByRole("button", { name: "Sign in with Example Corp" })).toBeVisible();
    await checkPage(page, `83-company-sign-in-${viewport.width}-${colorScheme}`);
    await context.close();
  });
}
