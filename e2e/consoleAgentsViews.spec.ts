import { axe, checkPage, expect, invitedMember, shot, test, themedAdminContext, THEMES_AND_WIDTHS } from "./fixtures";

/**
 * The agents and executions that consoleAgents.spec.ts's journey leaves (word-counter, looping),
 * in each theme and width, and as a viewer sees them. Apart from that journey so that they run
 * beside the other journeys rather than on the first phase's one worker (playwright.config.ts).
 */
test.describe.configure({ mode: "parallel" });

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`agents and executions in ${colorScheme} at ${viewport.width} px: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    const tag = `${viewport.width}-${colorScheme}`;
    for (const path of ["/agents", "/executions"]) {
      await page.goto(path);
      await expect(
        page
          .getByRole("progressbar")
          .or(page.getByRole("cell", { name: "word-counter" }))
          .first(),
      ).toBeVisible({ timeout: 20_000 });
      await checkPage(page, `58-${tag}${path.replace("/", "-")}`, path);
    }
    await page.getByRole("link", { name: /^exe_/ }).first().click();
    await expect(page.getByTestId("execution-status")).toBeVisible();
    await checkPage(page, `58-${tag}-execution`);
    await page.goto("/agents");
    await page.getByRole("button", { name: "Deploy agent" }).click();
    await axe(page);
    await shot(page, `58-${tag}-deploy`);
    await context.close();
  });
}

test("a viewer sees agents and executions and can change nothing", async ({ browser }) => {
  const { context: viewerContext, page: viewer } = await invitedMember(browser, "Vic Viewer");

  await viewer.goto("/agents");
  await expect(viewer.getByRole("cell", { name: "word-counter" })).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Deploy agent" })).toHaveCount(0);
  await viewer.getByRole("button", { name: "looping" }).click();
  const detail = viewer.getByRole("dialog", { name: "looping" });
  await expect(detail.getByTestId("agent-status")).toHaveText("active");
  await expect(detail.getByRole("button", { name: /Invoke|Deactivate|Activate/ })).toHaveCount(0);
  await shot(viewer, "59-viewer-agent");
  await viewer.goto("/executions");
  await expect(viewer.getByRole("progressbar").first()).toBeVisible();
  await expect(viewer.getByRole("region", { name: "Callback signing secret" })).toHaveCount(0);
  await viewer.getByRole("link", { name: /^exe_/ }).first().click();
  await expect(viewer.getByTestId("execution-status")).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Cancel execution" })).toHaveCount(0);
  await viewerContext.close();
});
