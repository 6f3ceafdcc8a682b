import type { APIRequestContext, Browser, BrowserContextOptions, Page } from "@playwright/test";
import { createHash } from "node:crypto";
import { adminContext, axe, expect, expectFits, mintApiKey, shot, test } from "./fixtures";

/**
 * The console's frame on every page: security headers, favicon, styled 404, no hydration errors
 * in dark mode, usable at 390 px (menu, no sideways scroll), and the axe check light and dark.
 * Each theme checks the pages in three parts, tests that may run on both workers at once: one
 * test for all of them took over four minutes on a loaded machine.
 * Runs after console.spec.ts (its own project, playwright.config.ts), whose first journey sets svc up and
 * saves the administrator's session.
 */
// Independent tests (each seeds what it needs, once per worker): they spread over the workers.
test.describe.configure({ mode: "parallel" });

/**
 * The console's pages: every link of the navigation an administrator sees, which the composition
 * root's nav entries make (server/areas.ts), so a new area's pages are checked without an edit here.
 */
async function consolePages(page: Page): Promise<string[]> {
  await page.goto("/overview");
  // The sidebar's links, hidden ones included (at 390 px the sidebar is folded into the menu).
  const hrefs = await page
    .locator('aside nav[aria-label="Console"] a')
    .evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
  expect(hrefs).toEqual(expect.arrayContaining(["/overview", "/members", "/docs/api", "/docs/errors"]));
  return hrefs;
}

/**
 * The detail pages, seeded through the API so they exist whichever journeys ran before: a webhook
 * with a long target and many event types (its page was 883 px wide at 390 px), and an execution.
 */
const details: string[] = [];

async function seedDetails(request: APIRequestContext) {
  if (details.length > 0) return;
  const { token } = mintApiKey();
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const hook = await request.post("/v1/webhooks", {
    headers,
    data: {
      target_url: `http://127.0.0.1:9/receivers/billing-and-invoicing-department/very-long-path-segment/${"x".repeat(60)}`,
      event_types: ["invoice.paid", "invoice.refunded", "customer.subscription.updated", "execution.completed"],
      description: "A webhook with a long target, to check the page fits",
    },
  });
  expect(hook.status(), await hook.text()).toBe(201);
  const code = "export default async (input, ctx) => { ctx.log('fits'); return { ok: true }; }";
  const bundle = Buffer.from(code);
  const deployed = await request.post("/v1/agents/deploy", {
    headers,
    data: {
      // A version of this worker's own: two workers seed at once.
      manifest: { name: "frame-fit", version: `1.0.${test.info().workerIndex}`, capabilities: [] },
      bundleBase64: bundle.toString("base64"),
      bundleHash: `sha256:${createHash("sha256").update(bundle).digest("hex")}`,
      wait: true,
    },
  });
  expect(deployed.status(), await deployed.text()).toBe(201);
  const invoked = await request.post(`/v1/agents/${(await deployed.json()).data.agentId}/invoke`, {
    headers,
    data: { input: { n: 1 } },
  });
  expect(invoked.status()).toBe(202);
  details.push(`/webhooks/${(await hook.json()).id}`, `/executions/${(await invoked.json()).id}`);
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

test("console pages carry the security headers; the favicon is served; an unknown page is the console's own 404", async ({
  page,
  request,
}) => {
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

/**
 * A third of the pages (every third one of the navigation's, then the detail pages): `part` 0-2.
 * The API reference is not among them: its axe pass alone takes longer than a dozen other pages,
 * so it has a test of its own (below), which runs beside these.
 */
const PARTS = 3;
async function partOf(page: Page, part: number): Promise<string[]> {
  return [...(await consolePages(page)), ...details]
    .filter((p) => p !== API_REFERENCE)
    .filter((_, i) => i % PARTS === part);
}

const API_REFERENCE = "/docs/api";
const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };

/**
 * axe on the API reference: every rule on the whole page except colour contrast, and colour
 * contrast on the page's head (title, links, the sections' list) and on the first operation of
 * each method (its badge has the method's own colours). Every operation is the same component in
 * the same colours, and contrast over all ~10,000 elements was four fifths of axe's time there
 * (9.3 of 11.7 s).
 */
async function axeApiReference(page: Page) {
  await axe(page, { disableRules: ["color-contrast"] });
  const firstOfEachMethod = await page.locator('section[aria-labelledby^="op-"]').evaluateAll((sections) => {
    const seen = new Map<string, string>();
    for (const s of sections) {
      const method = s.querySelector("p > span")?.textContent?.trim().toLowerCase() ?? "";
      if (!seen.has(method)) seen.set(method, `section[aria-labelledby="${s.getAttribute("aria-labelledby")}"]`);
    }
    return [...seen.values()];
  });
  expect(firstOfEachMethod.length, "operations of GET, POST and DELETE at least").toBeGreaterThanOrEqual(3);
  await axe(page, {
    onlyRules: ["color-contrast"],
    include: ["main h1", "main h1 + p", 'nav[aria-label="API sections"]', ...firstOfEachMethod],
  });
}
const API_OPERATION = "Register an agent or organization passport";

for (const colorScheme of ["light", "dark"] as const) {
  test(`the API reference in ${colorScheme} mode: framed, axe clean and nothing clipped at 1280 px; at 390 px a menu, no sideways scroll, no control outside the viewport`, async ({
    browser,
  }) => {
    test.setTimeout(180_000);
    const { context, page } = await signedIn(browser, { colorScheme, viewport: LAPTOP });
    const errors = collectErrors(page);
    await page.goto(API_REFERENCE);
    await ready(page);
    await expect(page.getByText(API_OPERATION).first()).toBeVisible({ timeout: 30_000 });
    expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(colorScheme === "dark");
    // The console's own navigation frames the documents too.
    await expect(page.getByRole("navigation", { name: "Console" })).toBeVisible();
    // ~10,000 elements (every operation and schema); its rules do not depend on the width, so once a theme.
    await axeApiReference(page);
    await expectFits(page, API_REFERENCE);
    // The reference is long: its first screen, to look at (docs.spec.ts photographs an opened response).
    await page.screenshot({ path: `e2e/screenshots/30-${colorScheme}-docs-api-top.png` });
    // Narrowed to a phone's width (as the page sweep below does).
    await page.setViewportSize(PHONE);
    await expect(page.getByRole("navigation", { name: "Console" })).toBeHidden();
    await expectFits(page, API_REFERENCE);
    await page.screenshot({ path: `e2e/screenshots/40-390-${colorScheme}-docs-api-top.png` });
    expect(errors).toEqual([]);
    await context.close();
  });
}

for (const colorScheme of ["light", "dark"] as const) {
  for (let part = 0; part < PARTS; part++) {
    test(`every page in ${colorScheme} mode (part ${part + 1} of ${PARTS}): at 1280 px no console errors, no hydration mismatch, axe clean, nothing clipped, the sidebar on docs pages; at 390 px a menu instead of the sidebar, no sideways scroll, no control outside the viewport`, async ({
      browser,
      request,
    }) => {
      // A dozen pages, two widths, axe and the fit check each: generous on a loaded machine.
      test.setTimeout(240_000);
      await seedDetails(request);
      const { context, page } = await signedIn(browser, { colorScheme, viewport: LAPTOP });
      const errors = collectErrors(page);
      for (const path of await partOf(page, part)) {
        const name = path.slice(1).replaceAll("/", "-");
        await page.setViewportSize(LAPTOP);
        await page.goto(path);
        await ready(page);
        // The console's own navigation frames every page, the documents included.
        await expect(page.getByRole("navigation", { name: "Console" })).toBeVisible();
        await axe(page);
        await expectFits(page, path);
        expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(
          colorScheme === "dark",
        );
        await shot(page, `30-${colorScheme}-${name}`);
        // The same page narrowed to a phone's width, not loaded again: the console lays itself out
        // with CSS and a ResizeObserver (ConsoleShell), nothing reads the width once at load, and a
        // second load of every page was a sixth of this test's time.
        await page.setViewportSize(PHONE);
        await expect(page.getByRole("navigation", { name: "Console" })).toBeHidden();
        await axe(page);
        const widths = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: window.innerWidth,
        }));
        expect(widths.scroll, `${path} scrolls sideways`).toBeLessThanOrEqual(widths.inner);
        await expectFits(page, path);
        await shot(page, `40-390-${colorScheme}-${name}`);
      }
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  test(`at 390 px in ${colorScheme} mode, loaded at that width: the menu opens with the keyboard, lists the console's pages, and navigating closes it`, async ({
    browser,
  }) => {
    const { context, page } = await signedIn(browser, { colorScheme, viewport: PHONE });
    const errors = collectErrors(page);
    await page.goto("/overview");
    await ready(page);
    await expect(page.getByRole("navigation", { name: "Console" })).toBeHidden();
    await expectFits(page, "/overview");
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
    await expectFits(page, "/provenance");
    expect(errors).toEqual([]);
    await context.close();
  });
}

test("on a short screen the sidebar says it scrolls, and shows its last entries when scrolled", async ({ browser }) => {
  const { context, page } = await adminContext(browser, { viewport: { width: 1280, height: 700 } });
  await page.goto("/overview");
  const nav = page.locator('aside nav[aria-label="Console"]');
  await expect(nav.getByRole("link", { name: "Overview" })).toBeVisible();
  const last = nav.getByRole("link").last();
  expect(await nav.evaluate((el) => el.scrollHeight > el.clientHeight), "the sidebar overflows at 700 px").toBe(true);
  await expect(nav.getByTestId("nav-more")).toBeVisible();
  await expect(last).not.toBeInViewport({ ratio: 1 });
  await axe(page);
  await shot(page, "42-sidebar-more-1280x700");
  await nav.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await expect(nav.getByTestId("nav-more")).toHaveCount(0);
  await expect(last).toBeInViewport({ ratio: 1 });
  await shot(page, "42a-sidebar-scrolled-1280x700");
  await context.close();
});
