import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import {
  expect,
  test as base,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
  type Route,
} from "@playwright/test";

/** Mints an API key with the operator CLI against the e2e server's data directory. */
export function mintApiKey(capabilities = "svc_api:*"): { token: string; delegation_id: string; org_did: string } {
  const out = execFileSync(
    process.execPath,
    ["bin/svc.mjs", "keys", "create", "--json", "--capabilities", capabilities],
    {
      env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR!, DATABASE_URL: "" },
    },
  );
  return JSON.parse(out.toString());
}

const shots = join(process.cwd(), "e2e/screenshots");
mkdirSync(shots, { recursive: true });

/** Saves a full-page screenshot of a journey's step (look at them: a page that renders but looks broken is broken). */
export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true, animations: "disabled" });
}

export const test = base;
export { expect } from "@playwright/test";

/**
 * Holds each of the console's own navigations (the RSC requests `router.replace` and links make,
 * marked `_rsc`) for `ms` before sending it, as a slow network would: a filter changed right after
 * another is then changed before the first has rendered. Returns the function that stops holding.
 */
export async function slowNavigations(page: Page, ms = 1_500): Promise<() => Promise<void>> {
  const isNavigation = (url: URL) => url.searchParams.has("_rsc");
  const hold = async (route: Route) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    // The page may have closed meanwhile (the test over): nothing is left to send it to.
    await route.fallback().catch(() => undefined);
  };
  await page.route(isNavigation, hold);
  return () => page.unroute(isNavigation, hold);
}

/**
 * axe-core's builder as the journeys run it. Only violations are read: axe then skips building
 * selectors for every passing node, which on a long page (the API reference) was most of its time.
 * Legacy mode runs `axe.run` in the page itself: the default runs `axe.runPartial` in every frame
 * and then `axe.finishRun` in a new blank page of the context, a renderer started for every check,
 * which took 2-3x the rules' own time (/provenance 2.3 s against 0.76 s, the same violations,
 * passes and incompletes). What legacy mode gives up is cross-origin frames, and the console
 * has no frames.
 */
function axeBuilder(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode(true).options({ resultTypes: ["violations"] });
}

/**
 * axe on the page as it is now: no serious or critical violation (WCAG 2 A/AA and best practice);
 * `scope` narrows it to some rules or some parts of the page.
 * Toasts are excluded: they are transient and fade in, and mid-animation their blended colours say
 * nothing about contrast.
 */
export async function axe(
  page: Page,
  scope: { disableRules?: string[]; onlyRules?: string[]; include?: string[] } = {},
): Promise<void> {
  // Next streams a page's metadata: after a client-side navigation the <title> arrives a moment
  // after the content, and axe would otherwise judge the page between the two.
  await expect(page).toHaveTitle(/\S/);
  let builder = axeBuilder(page).exclude("[data-sonner-toaster]");
  if (scope.disableRules) builder = builder.disableRules(scope.disableRules);
  if (scope.onlyRules) builder = builder.withRules(scope.onlyRules);
  for (const selector of scope.include ?? []) builder = builder.include(selector);
  const results = await builder.analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(
    serious.map(
      (v) =>
        `${v.id}: ${v.help}: ${v.nodes.map((n) => `${n.target.join(" ")} ${n.failureSummary?.split("\n")[1] ?? ""}`).join("; ")}`,
    ),
    page.url(),
  ).toEqual([]);
}

/**
 * Tables and pages that fit: no sideways scroll of the page; at 1280 px no table scrolls inside its
 * frame (nothing clipped: every column and its controls are in view); at any width no control
 * lies outside the viewport unless it sits in a frame that scrolls to it.
 */
export async function expectFits(page: Page, what = page.url()): Promise<void> {
  const report = await page.evaluate(() => {
    const inner = window.innerWidth;
    const wide = inner >= 1024;
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > inner)
      problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${inner} px viewport`);
    const scrollsX = (el: Element) => {
      const o = getComputedStyle(el).overflowX;
      return (o === "auto" || o === "scroll") && el.scrollWidth > el.clientWidth + 1;
    };
    if (wide) {
      for (const region of document.querySelectorAll("main table")) {
        const frame = region.parentElement!;
        if (scrollsX(frame))
          problems.push(
            `table "${frame.getAttribute("aria-label") ?? ""}" is clipped: ${frame.scrollWidth} px in ${frame.clientWidth} px`,
          );
      }
    }
    const label = (el: Element) =>
      (el.getAttribute("aria-label") || (el as HTMLElement).innerText || el.tagName).trim().slice(0, 40);
    for (const el of document.querySelectorAll(
      "main button, main a[href], main input, main select, main [role=button]",
    )) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      let inScroller = false;
      for (let a = el.parentElement; a; a = a.parentElement) if (scrollsX(a)) inScroller = true;
      if (inScroller && !wide) continue;
      if (r.right > inner + 1 || r.left < -1)
        problems.push(
          `control "${label(el)}" is outside the viewport (${Math.round(r.left)}–${Math.round(r.right)} px)`,
        );
    }
    return problems;
  });
  expect(report, `${what} at ${page.viewportSize()?.width} px`).toEqual([]);
}

/**
 * axe, no sideways scroll, nothing clipped, and a screenshot: what every page gets in each theme
 * and width. The journeys call it on the pages they have filled, so a table is checked with rows in it.
 */
export async function checkPage(page: Page, screenshot: string, what?: string): Promise<void> {
  await axe(page);
  await expectFits(page, what);
  await shot(page, screenshot);
}

/**
 * The themes and widths a page is checked in besides the journey's own (light at 1280 px): dark at
 * a laptop's width, and a phone's width in both themes.
 */
export const THEMES_AND_WIDTHS = [
  ["dark", { width: 1280, height: 900 }],
  ["light", { width: 390, height: 844 }],
  ["dark", { width: 390, height: 844 }],
] as const;

/**
 * An administrator's browser in `colorScheme` at `viewport`, the console's theme following the
 * browser's (the theme toggle's stored choice set back to "system").
 */
export async function themedAdminContext(
  browser: Browser,
  colorScheme: "light" | "dark",
  viewport: { width: number; height: number },
): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page } = await adminContext(browser, { colorScheme, viewport });
  await context.addInitScript(() => localStorage.setItem("theme", "system"));
  return { context, page };
}

/**
 * The administrator's signed-in browser state: console.spec.ts's first journey (which sets svc up
 * with a passkey) saves it, and later journeys and files sign in with it.
 */
const adminStateFile = () => join(process.env.E2E_DATA_DIR!, "e2e-admin-state.json");

export async function saveAdminState(context: BrowserContext): Promise<void> {
  await context.storageState({ path: adminStateFile() });
}

export async function adminContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  if (!existsSync(adminStateFile()))
    throw new Error(
      "console.spec.ts's first journey must run first: it sets svc up and saves the administrator's session",
    );
  const context = await browser.newContext({ ...options, storageState: adminStateFile() });
  return { context, page: await context.newPage() };
}

/**
 * Chromium's virtual WebAuthn authenticator on `page`'s context: the passkey of whoever signs up or
 * in there lives in it. `userVerified: false` answers as an authenticator that skipped verification.
 */
export async function virtualAuthenticator(page: Page, userVerified = true) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: userVerified,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/**
 * A new member: the administrator invites `name` as `role` (/members), and the member accepts in a
 * browser of their own with a passkey. Returns the member's signed-in context and page.
 */
export async function invitedMember(
  browser: Browser,
  name: string,
  role: "viewer" | "approver" | "admin" = "viewer",
): Promise<{ context: BrowserContext; page: Page }> {
  const admin = await adminContext(browser);
  await admin.page.goto("/members");
  await admin.page.getByLabel("Invite as").selectOption(role);
  await admin.page.getByRole("button", { name: "Create invitation link" }).click();
  const link = new URL((await admin.page.getByTestId("invite-link").textContent())!.trim());
  await admin.context.close();

  const context = await browser.newContext();
  const page = await context.newPage();
  await virtualAuthenticator(page);
  await page.goto(link.pathname + link.search);
  await page.getByLabel("Your name").fill(name);
  await page.getByRole("button", { name: "Create passkey" }).click();
  await expect(page.getByRole("heading", { name: new RegExp(`Welcome, ${name}`) })).toBeVisible({ timeout: 20_000 });
  return { context, page };
}
