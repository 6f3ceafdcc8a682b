import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { adminContext, axe, expect, shot, test } from "./fixtures";

/**
 * Agents and executions in the console: deploy a bundle hashed in the browser, invoke it, watch its
 * progress reach 100 % without a reload, cancel a run that loops, deactivate. Runs right after
 * console.spec.ts, on its worker and before any other journey (playwright.config.ts): it opens on
 * the empty agents page and counts the organization's executions. What only looks at the agents it
 * leaves (each theme and width, a viewer) is consoleAgentsViews.spec.ts, which runs beside the
 * other journeys.
 */
test.describe.configure({ mode: "serial" });

const LOOPING =
  "export default async (input, ctx) => { let i = 0; while (true) { i++; if (i % 2000000 === 0) ctx.progress(Math.min(99, i / 2000000), 'looping'); } };\n";

async function deploy(page: Page, file: Parameters<Page["setInputFiles"]>[1], manifest: string) {
  await page.getByRole("button", { name: "Deploy agent" }).click();
  const dialog = page.getByRole("dialog", { name: "Deploy an agent" });
  await dialog.getByLabel("Bundle (.js or .mjs)").setInputFiles(file);
  await expect(dialog.getByTestId("bundle-hash")).toHaveText(/^sha256:[0-9a-f]{64}$/);
  await dialog.getByLabel("Manifest (JSON)").fill(manifest);
  await dialog.getByRole("button", { name: "Deploy", exact: true }).click();
}

test("deploy an uploaded bundle → active → invoke → progress reaches 100 % live → result and logs → cancel a looping run → deactivate", async ({
  browser,
}) => {
  const { context, page } = await adminContext(browser, { colorScheme: "light" });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Agents" }).click();
  await expect(page.getByRole("heading", { name: "Agents" })).toBeVisible();
  await expect(page.getByText("No agents yet", { exact: false })).toBeVisible();
  await axe(page);
  await shot(page, "50-agents-empty");

  // The manifest is checked in the browser with the service's schema before anything is sent.
  await page.getByRole("button", { name: "Deploy agent" }).click();
  const dialog = page.getByRole("dialog", { name: "Deploy an agent" });
  await dialog.getByRole("button", { name: "Deploy", exact: true }).click();
  await expect(dialog.getByText("Choose the bundle", { exact: false })).toBeVisible();
  await dialog.getByLabel("Manifest (JSON)").fill("{ not json");
  await dialog.getByRole("button", { name: "Deploy", exact: true }).click();
  await expect(dialog.getByText(/^Not JSON/)).toBeVisible();
  await dialog
    .getByLabel("Manifest (JSON)")
    .fill(JSON.stringify({ name: "Has Capitals", version: "1", capabilities: [], extra: 1 }));
  await dialog.getByLabel("Bundle (.js or .mjs)").setInputFiles("examples/agents/progress.js");
  await dialog.getByRole("button", { name: "Deploy", exact: true }).click();
  await expect(dialog.getByText(/name: must be lower-case/)).toBeVisible();
  await axe(page);
  await shot(page, "51-deploy-invalid");
  await dialog.getByRole("button", { name: "Cancel" }).click();

  // A valid deploy, waited for: the agent opens, active, on its version.
  await deploy(page, "examples/agents/progress.js", readFileSync("examples/agents/progress.manifest.json", "utf8"));
  const detail = page.getByRole("dialog", { name: "word-counter" });
  await expect(detail.getByTestId("agent-status")).toHaveText("active", { timeout: 20_000 });
  await expect(detail.getByText("1.0.0").first()).toBeVisible();
  await expect(detail.getByText(/32 MiB · 5000 ms/)).toBeVisible();
  await axe(page);
  await shot(page, "52-agent-active");

  // Invoke: a JSON parse error is shown in place; a valid input opens the new execution.
  await detail.getByLabel("Input (JSON)").fill("{ oops");
  await detail.getByRole("button", { name: "Invoke" }).click();
  await expect(detail.getByText(/^Not JSON/)).toBeVisible();
  await detail
    .getByLabel("Input (JSON)")
    .fill(JSON.stringify({ text: "the quick brown fox jumps over the lazy dog the end", steps: 4 }));
  await detail.getByLabel("Max attempts").fill("2");
  await detail.getByRole("button", { name: "Invoke" }).click();
  await expect(page).toHaveURL(/\/executions\/exe_/, { timeout: 30_000 });
  // A marker on the window survives only if the page is never reloaded.
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
  await expect(page.getByRole("progressbar")).toHaveAttribute("aria-valuenow", "100", { timeout: 20_000 });
  await expect(page.getByTestId("execution-status")).toHaveText("completed");
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  await expect(page.getByText("1/2", { exact: true })).toBeVisible();
  await expect(page.getByLabel("Result JSON")).toContainText('"words": 11');
  await expect(page.getByTestId("execution-logs")).toContainText("counted 11 words");
  // What it was given, every attempt, and who invoked it by name.
  await expect(page.getByLabel("Input JSON")).toContainText('"steps": 4');
  await expect(page.getByTestId("execution-attempts").getByRole("listitem")).toHaveCount(1);
  await expect(page.getByTestId("execution-attempts")).toContainText("completed");
  await expect(page.locator("dd", { hasText: "Ada Admin" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Cancel execution" })).toHaveCount(0);
  await axe(page);
  await shot(page, "53-execution-completed");
  // Its records in the provenance explorer, filtered by the execution.
  const executionId = page.url().split("/").pop()!;
  await page.getByRole("link", { name: "Records of this execution" }).click();
  await expect(page).toHaveURL(new RegExp(`/provenance\\?resource=${executionId}`));
  await expect(page.getByText(`RUN /v1/agents/`).first()).toBeVisible({ timeout: 20_000 });

  // A run that loops until its limit: cancelled from the console, it ends at once.
  await page.goto("/agents");
  await deploy(
    page,
    { name: "looping.mjs", mimeType: "text/javascript", buffer: Buffer.from(LOOPING) },
    JSON.stringify({
      name: "looping",
      version: "1.0.0",
      capabilities: [],
      limits: { memory_mb: 16, timeout_ms: 60000 },
    }),
  );
  const looping = page.getByRole("dialog", { name: "looping" });
  await expect(looping.getByTestId("agent-status")).toHaveText("active", { timeout: 20_000 });
  await looping.getByRole("button", { name: "Invoke" }).click();
  await expect(page).toHaveURL(/\/executions\/exe_/, { timeout: 30_000 });
  await expect(page.getByTestId("execution-status")).toHaveText("processing", { timeout: 20_000 });
  await shot(page, "54-execution-running");
  await page.getByRole("button", { name: "Cancel execution" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Cancel execution" }).click();
  // The page shows it (the within-a-second stop itself is measured in tests/integration/executions.test.ts).
  await expect(page.getByTestId("execution-status")).toHaveText("cancelled", { timeout: 15_000 });
  await expect(page.getByTestId("error-text").first()).toContainText("cancelled");
  await shot(page, "55-execution-cancelled");

  // A failed run: its error reads as text, the stack folded until asked for, each attempt kept.
  await page.goto("/agents");
  await deploy(
    page,
    {
      name: "thrower.mjs",
      mimeType: "text/javascript",
      buffer: Buffer.from(
        "export default async (input, ctx) => { ctx.log('about to fail'); throw new TypeError('the invoice is missing'); };\n",
      ),
    },
    JSON.stringify({ name: "thrower", version: "1.0.0", capabilities: [] }),
  );
  const thrower = page.getByRole("dialog", { name: "thrower" });
  await expect(thrower.getByTestId("agent-status")).toHaveText("active", { timeout: 20_000 });
  await thrower.getByLabel("Max attempts").fill("2");
  await thrower.getByRole("button", { name: "Invoke" }).click();
  await expect(page).toHaveURL(/\/executions\/exe_/, { timeout: 30_000 });
  await expect(page.getByTestId("execution-status")).toHaveText("failed", { timeout: 20_000 });
  const error = page.getByTestId("error-text").first();
  await expect(error).toContainText("handler_error");
  await expect(error).toContainText("the invoice is missing");
  await expect(error).not.toContainText("\\n");
  await expect(page.getByTestId("execution-attempts").getByRole("listitem")).toHaveCount(2);
  const stack = page.getByTestId("error-stack").first();
  await expect(stack.getByLabel("Stack trace")).toBeHidden();
  await stack.getByText("Stack trace").click();
  await expect(stack.getByLabel("Stack trace")).toBeVisible();
  await axe(page);
  await shot(page, "55b-execution-failed");

  // The list: live bars, attempts, filters kept in the URL.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Executions" }).click();
  await expect(page.getByRole("heading", { name: "Executions", exact: true })).toBeVisible();
  await expect(page.getByRole("progressbar")).toHaveCount(3);
  await page.getByLabel("Status", { exact: true }).selectOption("cancelled");
  await expect(page).toHaveURL(/status=cancelled/);
  await expect(page.getByRole("progressbar")).toHaveCount(1);
  // Two filters changed in a row both hold (the second once started from the URL before the first).
  await page.getByLabel("Status", { exact: true }).selectOption("");
  await page.getByLabel("Agent", { exact: true }).selectOption({ label: "word-counter" });
  await expect(page).toHaveURL(/agent=agt_/);
  await expect(page).not.toHaveURL(/status=/);
  await expect(page.getByLabel("Status", { exact: true })).toHaveValue("");
  await expect(page.getByRole("cell", { name: "completed" })).toBeVisible();
  await expect(page.getByRole("progressbar")).toHaveCount(1);
  await page.reload();
  await expect(page.getByLabel("Agent", { exact: true })).toHaveValue(/^agt_/);
  await expect(page.getByRole("progressbar")).toHaveCount(1);
  await page.goto("/executions");
  await page.getByRole("button", { name: "Reveal secret" }).click();
  await expect(page.getByTestId("callback-secret")).toHaveText(/^whsec_/);
  const before = await page.getByTestId("callback-secret").textContent();
  await page.getByRole("button", { name: "Rotate" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Rotate" }).click();
  await expect(page.getByTestId("callback-secret")).not.toHaveText(before!);
  await axe(page);
  await shot(page, "56-executions");

  // Deactivate, confirmed: the agent can no longer be invoked.
  await page.goto("/agents");
  await page.getByRole("button", { name: "word-counter" }).click();
  await page.getByRole("dialog", { name: "word-counter" }).getByRole("button", { name: "Deactivate" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Deactivate" }).click();
  await expect(page.getByRole("dialog", { name: "word-counter" }).getByTestId("agent-status")).toHaveText("inactive");
  await expect(page.getByRole("dialog", { name: "word-counter" }).getByRole("button", { name: "Invoke" })).toHaveCount(
    0,
  );
  await expect(
    page.getByRole("dialog", { name: "word-counter" }).getByRole("button", { name: "Activate" }),
  ).toBeVisible();
  await shot(page, "57-agent-inactive");
  await page.keyboard.press("Escape");
  await expect(page.getByRole("cell", { name: "inactive" })).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();
});
