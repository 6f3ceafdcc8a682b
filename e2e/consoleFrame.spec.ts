import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContextOptions, Page } from "@playwright/test";
import { adminContext, expect, shot, test } from "./fixtures";

/**
 * The console's frame on every page: security headers, favicon, styled 404, no hydration errors
 * in dark mode, usable at 390 px (menu, no sideways scroll), and the axe check light and dark.
 * Runs after console.spec.ts (files run in alphabetical order on one worker), whose first journey
 * sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

/**
 * The console's pages: every link of the navigation an administrator sees, which the composition
 * root's nav entries make (server/areas.ts), so a new area's pages are checked without an edit here.
 */
async function consolePages(page: Page): Promise<string[]> {
  await page.goto("/overview");
  // The sidebar's links, hidden ones included (at 390 px the sidebar is folded into the menu).
  const hrefs = await page.locator('aside nav[aria-label="Console"] a').evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
  expect(hrefs).toEqual(expect.arrayContaining(["/overview", "/members", "/docs/api", "/docs/errors"]));
  return hrefs;
}

async function axe(page: Page) {
  const results = await new AxeBuilder({ page }).exclude("[data-sonner-toaster]").analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help}: ${v.nodes.map((n) => n.target.join(" ")).join("; ")}`), page.url()).toEqual([]);
}

/** Console errors and uncaught exceptions (React's hydration errors land in both). */
function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}

/** The administrator's session, the theme left to the system (the first journey chose dark). */
async function signedIn(browser: Browser, options: BrowserContextOptions) {
  const { context, page } = await adminContext(browser, options);
  await context.addInitScript(() => localStorage.setItem("theme", "system"));
  return { context, page };
}

async function ready(page: Page) {
  await expect(page.locator("h1").first()).toBeVisible({ timeout: 30_000 });
  // Tables and lists settle (no "Loading…" left) before anything is measured or photographed.
  await expect(page.getByText("Loading", { exact: false })).toHaveCount(0, { timeout: 30_000 });
}

test("console pages carry the security headers; the favicon is served; an unknown page is the console's own 404", async ({ page, request }) => {
  for (const path of ["/sign-in", "/docs/errors", "/no-such-page"]) {
    const res = await request.get(path);
    const headers = res.headers();
    expect(headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"], path).toContain("default-src 'self'");
    expect(headers["x-content-type-options"], path).toBe("nosniff");
    expect(headers["referrer-policy"], path).toBe("strict-origin-when-cross-origin");
  }
  const favicon = await request.get("/favicon.ico");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toContain("image/");

  const errors = collectErrors(page);
  const res = await page.goto("/no-such-page");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "This page does not exist" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to the console" })).toBeVisible();
  // Styled: the console's card, not the framework's bare text.
  expect(await page.locator("main > div").evaluate((el) => getComputedStyle(el).borderRadius)).not.toBe("0px");
  await axe(page);
  await shot(page, "20-not-found");
  // The documents are public, in the console's look, without a session.
  await page.goto("/docs/errors#unauthenticated");
  await expect(page.getByRole("heading", { name: /401 · Authentication required/ })).toBeVisible();
  await expect(page.getByRole("link", { name: "Sign in" })).toBeVisible();
  await axe(page);
  await shot(page, "21-error-types-public");
  expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
});

for (const colorScheme of ["light", "dark"] as const) {
  test(`every page in ${colorScheme} mode: no console errors, no hydration mismatch, axe clean, the sidebar on docs pages`, async ({ browser }) => {
    const { context, page } = await signedIn(browser, { colorScheme });
    const errors = collectErrors(page);
    for (const path of await consolePages(page)) {
      await page.goto(path);
      await ready(page);
      // The console's own navigation frames every page, the documents included.
      await expect(page.getByRole("navigation", { name: "Console" })).toBeVisible();
      if (path === "/docs/api") await expect(page.getByText("Register an agent or organization passport").first()).toBeVisible({ timeout: 30_000 });
      else await axe(page);
      expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(colorScheme === "dark");
      await shot(page, `30-${colorScheme}-${path.slice(1).replace("/", "-")}`);
    }
    expect(errors).toEqual([]);
    await context.close();
  });
}

for (const colorScheme of ["light", "dark"] as const) {
  test(`at 390 px (${colorScheme}): a menu instead of the sidebar, and no page scrolls sideways`, async ({ browser }) => {
    const { context, page } = await signedIn(browser, { colorScheme, viewport: { width: 390, height: 844 } });
    const errors = collectErrors(page);
    for (const path of await consolePages(page)) {
      await page.goto(path);
      await ready(page);
      if (path === "/docs/api") await expect(page.getByText("Register an agent or organization passport").first()).toBeVisible({ timeout: 30_000 });
      else await axe(page);
      await expect(page.getByRole("navigation", { name: "Console" })).toBeHidden();
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll, `${path} scrolls sideways`).toBeLessThanOrEqual(widths.inner);
      await shot(page, `40-390-${colorScheme}-${path.slice(1).replace("/", "-")}`);
    }
    // The menu opens with the keyboard, lists the console's pages, and navigating closes it.
    await page.goto("/overview");
    await ready(page);
    await page.getByRole("button", { name: "Open menu" }).focus();
    await page.keyboard.press("Enter");
    const nav = page.getByRole("dialog", { name: "Menu" }).getByRole("navigation", { name: "Console" });
    await expect(nav).toBeVisible();
    await axe(page);
    await shot(page, `41-390-${colorScheme}-menu`);
    await page.keyboard.press("Escape");
    await expect(nav).toBeHidden();
    await page.getByRole("button", { name: "Open menu" }).click();
    await nav.getByRole("link", { name: "Provenance" }).click();
    await expect(page).toHaveURL(/\/provenance/);
    await expect(page.getByRole("heading", { name: "Provenance" })).toBeVisible();
    await expect(page.getByRole("dialog", { name: "Menu" })).toHaveCount(0);
    // A long DID is truncated, with a button that copies all of it.
    await expect(page.getByRole("button", { name: /^Copy DID/ }).first()).toBeVisible();
    expect(errors).toEqual([]);
    await context.close();
  });
}
