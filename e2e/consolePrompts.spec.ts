import type { Page } from "@playwright/test";
import {
  adminContext,
  axe,
  checkPage,
  expect,
  mintApiKey,
  shot,
  test,
  themedAdminContext,
  THEMES_AND_WIDTHS,
} from "./fixtures";

/**
 * The prompt registry in the console: two versions published through the public API, reasoning
 * calls that name the prompt (the e2e provider is unreachable, so they are recorded as failed
 * calls, which is what performance counts), feedback signals; then the page: the list, the
 * versions and their diff, a preview rendered from the form the input schema generates, the
 * history of active-version moves, the charts. Light and dark, 1280 and 390 px. Runs after console.spec.ts
 * (its own project, playwright.config.ts), whose first journey sets svc up and saves the administrator's
 * session.
 */
test.describe.configure({ mode: "serial" });

const KEY = "support.greeting";
const meta = { id: KEY, namespace: "support", scope: "organization", description: "Greets a customer" };
const input_schema = {
  type: "object",
  properties: {
    customer: { type: "string", title: "Customer", description: "Who is greeted" },
    tickets: { type: "integer", title: "Open tickets" },
    vip: { type: "boolean", title: "VIP" },
  },
  required: ["customer"],
};

test("two versions published through the API → the registry page: diff, a rendered preview from the form, history, charts", async ({
  browser,
  request,
}) => {
  test.setTimeout(150_000);
  const key = mintApiKey("svc_api:*");
  const headers = { Authorization: `Bearer ${key.token}` };
  const v1 = await request.post(`/v1/prompts/${KEY}/versions`, {
    headers,
    data: {
      version: "1.0.0",
      content: "Hello {{customer}}.\nYou have {{tickets}} open tickets.",
      meta,
      input_schema,
    },
  });
  expect(v1.status(), await v1.text()).toBe(201);
  const v2 = await request.post(`/v1/prompts/${KEY}/versions`, {
    headers,
    data: {
      version: "1.1.0",
      content:
        "Hello {{customer}}{{#vip}}, our valued VIP{{/vip}}.\nYou have {{tickets}} open tickets.\nHow can we help?",
      meta,
      input_schema,
    },
  });
  expect(v2.status(), await v2.text()).toBe(201);
  // Reasoning calls that name the prompt, with feedback. Whether a provider answers depends on whether
  // the reasoning journey, which runs beside this one, has added its loopback provider yet: a call
  // is recorded either way (succeeded, or failed with a 502), and only this key's calls are read.
  for (let i = 0; i < 3; i++) {
    const think = await request.post("/v1/reasoning/think", {
      headers,
      data: { prompt: { key: KEY, inputs: { customer: "Acme", tickets: i } } },
    });
    expect([200, 502], await think.text()).toContain(think.status());
  }
  const calls = await (
    await request.get(`/v1/reasoning/calls?limit=3&delegation_id=${encodeURIComponent(key.delegation_id)}`, { headers })
  ).json();
  expect(calls.data).toHaveLength(3);
  const signals = ["positive", "rephrase", "correction"];
  for (const [i, call] of (calls.data as { id: string; prompt_key: string }[]).entries()) {
    expect(call.prompt_key).toBe(KEY);
    const fb = await request.post(`/v1/reasoning/calls/${call.id}/feedback`, {
      headers,
      data: { signal: signals[i] },
    });
    expect(fb.status(), await fb.text()).toBe(200);
  }

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Prompts" }).click();
  await expect(page.getByRole("heading", { name: "Prompts", exact: true })).toBeVisible();
  const list = page.getByRole("region", { name: "Prompts, by key" });
  await list.getByRole("link", { name: KEY }).click();
  await expect(page).toHaveURL(/key=support\.greeting/);
  await expect(page.getByRole("heading", { name: new RegExp(KEY.replace(".", "\\.")) })).toBeVisible();
  const versions = page.getByRole("region", { name: `Versions of ${KEY}, newest first` });
  await expect(versions.getByRole("row")).toHaveCount(3);

  // The diff: 1.0.0 → 1.1.0 by default.
  const diff = page.getByTestId("version-diff");
  await expect(diff.locator("del").filter({ hasText: "- Hello {{customer}}." })).toBeVisible();
  await expect(diff.locator("ins").filter({ hasText: "+ How can we help?" })).toBeVisible();

  // The preview: a form from the input schema; the required field refused empty, then rendered.
  await page.getByRole("button", { name: "Render" }).click();
  await expect(page.getByRole("alert").filter({ hasText: /input schema/ })).toBeVisible();
  await page.getByLabel("Customer").fill("Acme");
  await page.getByLabel("Open tickets").fill("2");
  await page.getByLabel("VIP").check();
  // The first publication made 1.0.0 active: the preview's default.
  await expect(page.getByLabel("Version", { exact: true })).toHaveValue("1.0.0");
  await page.getByRole("button", { name: "Render" }).click();
  await expect(page.getByTestId("rendered-text")).toHaveText("Hello Acme.\nYou have 2 open tickets.");
  await page.getByLabel("Version", { exact: true }).selectOption("1.1.0");
  await page.getByRole("button", { name: "Render" }).click();
  await expect(page.getByTestId("rendered-text")).toHaveText(
    "Hello Acme, our valued VIP.\nYou have 2 open tickets.\nHow can we help?",
  );

  // The charts: calls per model, affinity.
  await expect(page.locator("figcaption", { hasText: "Calls per model" })).toBeVisible();
  await expect(page.getByRole("table", { name: "Calls per model, last 30 days" })).toContainText("gpt-4o-mini");
  await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("table", { name: "Prompt × model affinity, last 30 days" })).toContainText(KEY);
  await axe(page);
  await shot(page, "80-prompts");
  await page
    .locator("figure", { hasText: "Prompt × model affinity" })
    .screenshot({ path: "e2e/screenshots/80a-prompts-affinity.png" });

  // Only the active version reads active: publishing 1.1.0 did not activate it.
  const row = (version: string) =>
    versions.getByRole("row").filter({ hasText: new RegExp(`^${version.replace(/\./g, "\\.")}`) });
  await expect(row("1.0.0")).toContainText("active");
  await expect(row("1.1.0")).toContainText("published");
  await expect(versions.getByText("active", { exact: true })).toHaveCount(1);

  // The console moves the active version (a governed call), and the history shows the move.
  await row("1.1.0").getByRole("button", { name: "Make 1.1.0 active" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Make 1.1.0 active" }).click();
  await expect(page.getByRole("heading", { name: new RegExp(KEY.replace(".", "\\.")) })).toContainText("active 1.1.0");
  await expect(row("1.1.0").getByText("active", { exact: true })).toBeVisible();
  await expect(row("1.0.0").getByText("published", { exact: true })).toBeVisible();
  const history = page.getByRole("region", { name: `Active-version moves and deprecations of ${KEY}, newest first` });
  await expect(history.getByRole("row").nth(1)).toContainText("1.0.0");
  await expect(history.getByRole("row").nth(1)).toContainText("1.1.0");
  await expect(history.getByRole("row").nth(1)).toContainText("call");
  const profile = async () =>
    ((await (await request.get(`/v1/prompts/${KEY}`, { headers })).json()) as { active_version: string })
      .active_version;
  expect(await profile()).toBe("1.1.0");
  await axe(page);
  await shot(page, "81-prompts-history");

  // And rolls it back to the version it came from.
  await page.getByRole("button", { name: "Roll back to 1.0.0" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Roll back to 1.0.0" }).click();
  await expect(row("1.0.0").getByText("active", { exact: true })).toBeVisible();
  await expect(history.getByRole("row").nth(1)).toContainText("call");
  await expect.poll(profile).toBe("1.0.0");
  await shot(page, "81a-prompts-rolled-back");
  expect(errors).toEqual([]);
  await context.close();
});

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`the prompt registry in ${colorScheme} at ${viewport.width} px: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    await page.goto(`/prompts?key=${KEY}`);
    await expect(page.getByTestId("version-diff")).toBeVisible({ timeout: 20_000 });
    await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible({ timeout: 20_000 });
    await checkPage(page, `82-prompts-${viewport.width}-${colorScheme}`);
    await context.close();
  });
}
