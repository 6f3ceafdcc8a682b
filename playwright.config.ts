import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "@playwright/test";

/**
 * End-to-end journeys against the production server (`npm start`) in a real browser. Where
 * Playwright's own browser is not installed (machines without access to its download host), the
 * system's Chromium is used (Debian's package: /usr/bin/chromium).
 */
const port = Number(process.env.E2E_PORT || 3199);
const dataDir = process.env.E2E_DATA_DIR || mkdtempSync(join(tmpdir(), "svc-e2e-"));
process.env.E2E_DATA_DIR = dataDir;
const systemChromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const usePlaywrightBrowser = process.env.E2E_PLAYWRIGHT_BROWSER === "1" || !systemChromium;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  reporter: [["list"], ["json", { outputFile: "test-results/e2e.json" }]],
  use: {
    baseURL: `http://localhost:${port}`,
    trace: "retain-on-failure",
    launchOptions: usePlaywrightBrowser
      ? {}
      : { executablePath: systemChromium, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"] },
  },
  webServer: {
    command: "node scripts/start.mjs",
    url: `http://localhost:${port}/livez`,
    timeout: 400_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: "", SVC_PUBLIC_URL: `http://localhost:${port}`, SVC_OUTBOUND_ALLOW: "127.0.0.1/32" },
  },
});
