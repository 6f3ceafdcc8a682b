import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { test as base, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "@playwright/test";

/** Mints an API key with the operator CLI against the e2e server's data directory. */
export function mintApiKey(capabilities = "svc_api:*"): { token: string; delegation_id: string; org_did: string } {
  const out = execFileSync(process.execPath, ["bin/svc.mjs", "keys", "create", "--json", "--capabilities", capabilities], {
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR!, DATABASE_URL: "" },
  });
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
 * The administrator's signed-in browser state: console.spec.ts's first journey (which sets svc up
 * with a passkey) saves it, and later journeys and files sign in with it.
 */
const adminStateFile = () => join(process.env.E2E_DATA_DIR!, "e2e-admin-state.json");

export async function saveAdminState(context: BrowserContext): Promise<void> {
  await context.storageState({ path: adminStateFile() });
}

export async function adminContext(browser: Browser, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  if (!existsSync(adminStateFile())) throw new Error("console.spec.ts's first journey must run first: it sets svc up and saves the administrator's session");
  const context = await browser.newContext({ ...options, storageState: adminStateFile() });
  return { context, page: await context.newPage() };
}
