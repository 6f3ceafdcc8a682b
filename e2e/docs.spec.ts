import { axe, expect, shot, test } from "./fixtures";

/**
 * The public documents, which need no session and nothing set up: they run in the first phase,
 * beside the first-run journey (playwright.config.ts).
 */
test.describe("the documents", () => {
  test("serves the API reference, rendered from the live OpenAPI document", async ({ page }) => {
    await page.goto("/docs/api");
    await expect(page.getByText("Register an agent or organization passport").first()).toBeVisible({ timeout: 30_000 });
    await expect(page.getByText("svc API").first()).toBeVisible();
    // A response's schema is rendered when it is opened, and passes axe like the rest.
    const response = page
      .locator("section", { has: page.getByRole("heading", { name: "Register an agent or organization passport" }) })
      .locator("details")
      .first();
    await response.locator("summary").click();
    await expect(response.getByRole("table").first()).toBeVisible();
    await axe(page, { include: ["details[open]"] });
    // The opened response, to look at (a shot of the whole page, ~94,000 px tall, took 7 s and is
    // cut at Chromium's limit; consoleFrame.spec.ts photographs its top in each theme and width).
    await response.screenshot({ path: "e2e/screenshots/api-reference-response.png", animations: "disabled" });
  });

  test("the problem types page explains every error", async ({ page }) => {
    await page.goto("/docs/errors#unauthenticated");
    await expect(page.getByRole("heading", { name: /401 · Authentication required/ })).toBeVisible();
    await shot(page, "error-types");
    await axe(page);
  });
});
