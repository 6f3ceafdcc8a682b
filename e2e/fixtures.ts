import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test as base, type Page } from "@playwright/test";

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
