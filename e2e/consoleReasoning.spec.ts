import { generateKeyPairSync } from "node:crypto";
import type { Page } from "@playwright/test";
import { startFakeOpenAI, type FakeOpenAI } from "../tests/integration/peers/fakeOpenAI";
import {
  adminContext,
  axe,
  checkPage,
  expect,
  expectFits,
  mintApiKey,
  shot,
  slowNavigations,
  test,
  themedAdminContext,
  THEMES_AND_WIDTHS,
} from "./fixtures";

/**
 * Model benchmarks in the console: results seeded through the public API (as a CI job would
 * submit them), then the charts (scores per type, over time, the comparison of models) looked at
 * light and dark, at 1280 and 390 px. Runs after console.spec.ts (its own project, playwright.config.ts),
 * whose first journey sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

// The catalogue's provider (playwright.config.ts) points at this fake OpenAI-compatible server.
let modelPeer: FakeOpenAI;
test.beforeAll(async () => {
  modelPeer = await startFakeOpenAI(["gpt-4o-mini", "claude-haiku-4-5", "llama-3.1-8b"], {
    port: Number(process.env.E2E_MODEL_PEER_PORT),
  });
});
test.afterAll(async () => {
  await modelPeer?.close();
});

const MODELS = ["gpt-4o-mini", "claude-haiku-4-5", "llama-3.1-8b"] as const;
const SUITES = [
  ["reasoning", "bbh"],
  ["reasoning", "arc-challenge"],
  ["coding", "humaneval"],
  ["coding", "mbpp"],
  ["math", "gsm8k"],
  ["summarization", "xsum"],
] as const;
// Each model's level per type, and how much it gains per week (a model improving, one flat).
const LEVEL: Record<(typeof MODELS)[number], Record<string, number>> = {
  "gpt-4o-mini": { reasoning: 78, coding: 84, math: 86, summarization: 71 },
  "claude-haiku-4-5": { reasoning: 82, coding: 88, math: 79, summarization: 80 },
  "llama-3.1-8b": { reasoning: 61, coding: 58, math: 64, summarization: 66 },
};
const GAIN: Record<(typeof MODELS)[number], number> = {
  "gpt-4o-mini": 0.6,
  "claude-haiku-4-5": 1.1,
  "llama-3.1-8b": 1.8,
};

test("benchmark results submitted through the API → scores by type, over time, and a comparison of models", async ({
  browser,
  request,
}) => {
  test.setTimeout(150_000);
  const key = mintApiKey("svc_api:benchmarks:write,svc_api:models:read");
  const headers = { Authorization: `Bearer ${key.token}` };
  // Six weekly runs of every suite for every model, the newest yesterday.
  for (const model of MODELS)
    for (const [type, suite] of SUITES)
      for (let week = 5; week >= 0; week--) {
        const base = LEVEL[model][type]! - GAIN[model] * week * 2 + (suite.length % 3);
        const res = await request.post("/v1/reasoning/benchmarks", {
          headers,
          data: {
            model_id: model,
            benchmark_type: type,
            benchmark_suite: suite,
            score: Math.max(0, Math.min(100, Math.round(base * 10) / 10)),
            run_at: new Date(Date.now() - (week * 7 + 1) * 86_400_000).toISOString(),
            run_by: "ci-nightly",
            test_cases_passed: Math.round(base * 2),
            test_cases_total: 200,
          },
        });
        expect(res.status(), await res.text()).toBe(201);
      }
  // A model the catalogue does not know is refused, and appears nowhere.
  const unknown = await request.post("/v1/reasoning/benchmarks", {
    headers,
    data: { model_id: "not-in-catalogue", benchmark_type: "math", benchmark_suite: "gsm8k", score: 99 },
  });
  expect(unknown.status()).toBe(404);

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Benchmarks" }).click();
  await expect(page.getByRole("heading", { name: "Model benchmarks" })).toBeVisible();
  // The chart's title (its table repeats it as a caption, for screen readers).
  await expect(page.locator("figcaption", { hasText: "Scores by benchmark type" })).toBeVisible();
  // Each chart has drawn (recharts renders SVG) and says the same in a table for screen readers.
  await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible({ timeout: 20_000 });
  await expect(page.locator(".recharts-line").first()).toBeVisible();
  await expect(page.locator(".recharts-radar").first()).toBeVisible();
  await expect(page.getByRole("table", { name: "Scores by benchmark type" })).toContainText("claude-haiku-4-5");
  await expect(page.getByRole("cell", { name: "not-in-catalogue" })).toHaveCount(0);
  await axe(page);
  await shot(page, "70-benchmarks");
  await page
    .locator("figure", { hasText: "Scores by benchmark type" })
    .screenshot({ path: "e2e/screenshots/70a-benchmarks-by-type.png" });

  // Over time, for coding: one line per model.
  await page.getByLabel("Benchmark type").selectOption("coding");
  await expect(page).toHaveURL(/type=coding/);
  await expect(page.locator("figcaption", { hasText: "Over time: coding" })).toBeVisible();
  await expect(page.locator(".recharts-line")).toHaveCount(3);
  await page
    .locator("figure", { hasText: "Over time: coding" })
    .screenshot({ path: "e2e/screenshots/70b-benchmarks-over-time.png" });

  // The comparison: all three by default; drop one, and the table of suites follows.
  const compare = page.getByRole("group", { name: "Compare models" });
  await expect(compare.getByRole("button", { name: "llama-3.1-8b" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator(".recharts-radar")).toHaveCount(3);
  // Three models' columns of scores per suite, and the results' table, fit the page at 1280 px:
  // nothing clipped (a half-width card cut the third model's column off).
  await expect(
    page.getByRole("region", { name: "Scores per suite" }).getByRole("columnheader", { name: "llama-3.1-8b" }),
  ).toBeVisible();
  await expectFits(page, "benchmarks comparing three models");
  await compare.getByRole("button", { name: "llama-3.1-8b" }).click();
  await expect(page).toHaveURL(/compare=claude-haiku-4-5(%2C|,)gpt-4o-mini/);
  await expect(page.locator(".recharts-radar")).toHaveCount(2);
  const suites = page.getByRole("region", { name: "Scores per suite" });
  await expect(suites.getByRole("columnheader")).toHaveText(["Suite", "claude-haiku-4-5", "gpt-4o-mini"]);
  await expect(suites.getByRole("row", { name: /humaneval/ })).toContainText("(best)");
  await axe(page);
  await shot(page, "71-benchmarks-compare");
  await compare.screenshot({ path: "e2e/screenshots/71a-benchmarks-compare-picker.png" });
  await page
    .locator("figure", { hasText: "Side by side" })
    .screenshot({ path: "e2e/screenshots/71b-benchmarks-compare.png" });

  // One model picked: the page asks for another rather than drawing a comparison of one.
  await compare.getByRole("button", { name: "claude-haiku-4-5" }).click();
  await expect(page.getByText("Pick at least two models to compare.")).toBeVisible();

  // Two filters changed in quick succession, on a slow network: the type is picked before the new
  // window has rendered, and builds on it (built from the URL as last rendered, it put the window back).
  const windowSelect = page.getByRole("combobox", { name: "Window", exact: true });
  const stopHolding = await slowNavigations(page);
  await windowSelect.selectOption("30");
  await page.getByLabel("Benchmark type").selectOption("math");
  await expect(page).toHaveURL(
    (u) =>
      u.searchParams.get("days") === "30" &&
      u.searchParams.get("type") === "math" &&
      u.searchParams.get("compare") === "gpt-4o-mini", // the one model left picked above
    { timeout: 15_000 },
  );
  await stopHolding();
  await expect(windowSelect).toHaveValue("30");
  await expect(page.locator("figcaption", { hasText: "Over time: math" })).toBeVisible();
  // Applied: the weekly runs of the last 30 days are five (the sixth is 36 days old).
  await expect(page.getByRole("table", { name: "Over time: math" }).getByRole("row")).toHaveCount(1 + 5);
  await expect(page.getByText("Pick at least two models to compare.")).toBeVisible();
  // Two models picked in quick succession, on a slow network: the second adds to the first.
  const holding = await slowNavigations(page);
  await compare.getByRole("button", { name: "llama-3.1-8b" }).click();
  await compare.getByRole("button", { name: "claude-haiku-4-5" }).click();
  await expect(page).toHaveURL((u) => u.searchParams.get("compare") === "gpt-4o-mini,llama-3.1-8b,claude-haiku-4-5", {
    timeout: 15_000,
  });
  await holding();
  await expect(page.locator(".recharts-radar")).toHaveCount(3);

  // The list of results below the charts, newest first, pages with its cursor.
  await expect(page.getByRole("region", { name: "Benchmark results, newest run first" }).getByRole("row")).toHaveCount(
    21,
  );
  await page.getByRole("button", { name: "Load more" }).click();
  await expect(page.getByRole("region", { name: "Benchmark results, newest run first" }).getByRole("row")).toHaveCount(
    41,
  );
  expect(errors).toEqual([]);
  await context.close();
});

test("the models page: the configured provider, its models with prices, an Anthropic provider added and removed", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Models" }).click();
  await expect(page.getByRole("heading", { name: "Models", exact: true })).toBeVisible();
  const envProvider = page.getByTestId("provider").filter({ hasText: "e2e-loopback" });
  await expect(envProvider).toContainText("SVC_MODEL_PROVIDERS");
  await expect(envProvider).toContainText("3 declared");
  const catalogue = page.getByRole("region", { name: "Models of the catalogue" });
  await expect(catalogue.getByText("e2e-loopback/gpt-4o-mini")).toBeVisible({ timeout: 20_000 });
  await axe(page);
  await shot(page, "73-models");

  await page.getByRole("button", { name: "Add provider" }).click();
  const dialog = page.getByRole("dialog", { name: "Add a model provider" });
  await dialog.getByLabel("Name").fill("Bad Name");
  await dialog.getByRole("button", { name: "Add provider" }).click();
  await expect(dialog.getByText("Lower case letters, digits")).toBeVisible();
  await dialog.getByLabel("Name").fill("anthropic-e2e");
  await dialog.getByLabel("Kind").selectOption("anthropic");
  await dialog.getByLabel("API key (optional)").fill("sk-ant-e2e-not-a-real-key");
  await dialog.getByLabel("Models (optional)").fill("claude-haiku-4-5");
  await axe(page);
  await shot(page, "73a-models-add-provider");
  await dialog.getByRole("button", { name: "Add provider" }).click();
  await expect(dialog).toBeHidden();
  const added = page.getByTestId("provider").filter({ hasText: "anthropic-e2e" });
  await expect(added).toContainText("set (never shown)");
  await expect(page.getByText("sk-ant-e2e-not-a-real-key")).toHaveCount(0);
  await expect(catalogue.getByText("anthropic-e2e/claude-haiku-4-5")).toBeVisible();
  await shot(page, "73b-models-provider-added");
  page.once("dialog", (d) => void d.accept());
  await added.getByRole("button", { name: "Remove" }).click();
  await expect(added).toHaveCount(0);
  await expect(catalogue.getByText("anthropic-e2e/claude-haiku-4-5")).toHaveCount(0);

  // A routing rule: coding at simple complexity prefers gpt-4o-mini; listed, then removed.
  const rules = page.locator("section[aria-labelledby='rules-heading']");
  await expect(rules).toContainText("No routing rule");
  const ruleForm = page.getByRole("form", { name: "Set a routing rule" });
  await ruleForm.getByRole("button", { name: "Set rule" }).click();
  await expect(ruleForm.getByText("Choose the model the rule prefers.")).toBeVisible();
  await ruleForm.getByLabel("Task").selectOption("coding");
  await ruleForm.getByLabel("Complexity").selectOption("simple");
  await ruleForm.getByLabel("Preferred model").selectOption("e2e-loopback/gpt-4o-mini");
  await ruleForm.getByRole("button", { name: "Set rule" }).click();
  const rule = rules.getByRole("row").filter({ hasText: "coding:simple" });
  await expect(rule).toContainText("e2e-loopback/gpt-4o-mini");
  await expect(rule).toContainText("active");
  await axe(page);
  await shot(page, "73c-models-routing-rule");
  await rule.getByRole("button", { name: "Remove the rule for coding:simple" }).click();
  await expect(rule).toHaveCount(0);
  expect(errors).toEqual([]);
  await context.close();
});

test("the playground makes a routed call and shows why; the spend page shows it, with a delegation's budget", async ({
  browser,
  request,
}) => {
  test.setTimeout(90_000);
  // An agent's delegation with a budget of $1 a day makes a call through the API, for an entity.
  const key = mintApiKey("svc_api:*");
  const headers = { Authorization: `Bearer ${key.token}` };
  const publicKey = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
  const passport = await request.post("/v1/passports", {
    headers,
    data: { type: "agent", name: "budgeted e2e agent", public_key: publicKey },
  });
  expect(passport.status(), await passport.text()).toBe(201);
  const grant = await request.post("/v1/delegation-tokens", {
    headers,
    data: {
      delegate_did: (await passport.json()).did,
      capabilities: ["svc_api:reasoning:think"],
      duration_seconds: 3600,
      budget: { limit_usd: 1, period: "day" },
    },
  });
  expect(grant.status(), await grant.text()).toBe(201);
  const agent = await grant.json();
  const agentCall = await request.post("/v1/reasoning/think", {
    headers: { Authorization: `Bearer ${agent.token}` },
    data: { messages: [{ role: "user", content: "Plan the week." }], entity_id: "team-e2e", max_tokens: 50 },
  });
  expect(agentCall.status(), await agentCall.text()).toBe(200);

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Playground" }).click();
  await expect(page.getByRole("heading", { name: "Playground" })).toBeVisible();
  // A bound of the request refused beside its field, before anything is sent.
  await page.getByLabel("Temperature (0–2)").fill("3");
  await page.getByRole("button", { name: "Call" }).click();
  await expect(page.getByText("A number from 0 to 2.")).toBeVisible();
  await page.getByLabel("Temperature (0–2)").fill("0.2");
  await page.getByRole("button", { name: "Add message" }).click();
  await page.getByLabel("Role of message 2").selectOption("system");
  await page.getByLabel("Message 2", { exact: true }).fill("Answer briefly.");
  await page.getByLabel("Task").selectOption("coding");
  await page.getByLabel("Complexity").selectOption("simple");
  await page.getByLabel("Budget").selectOption("minimize");
  await page.getByLabel("Max tokens").fill("64");
  await page.getByRole("button", { name: "Call" }).click();
  const result = page.getByTestId("playground-result");
  await expect(result.getByTestId("answer-text")).toHaveText("w0 w1 w2 w3 w4", { timeout: 20_000 });
  await expect(result.getByTestId("selected-model")).toHaveText("e2e-loopback/gpt-4o-mini");
  await expect(result.getByTestId("routing-reason")).toContainText("minimize for coding at simple complexity");
  await expect(result.getByRole("list", { name: "Attempts" })).toContainText("succeeded");
  await expect(result.getByTestId("call-cost")).toHaveText(/^\$\d/);
  // What the provider received: the temperature and max_tokens, passed through.
  const sent = modelPeer.requests.at(-1)!;
  expect(sent).toMatchObject({ model: "gpt-4o-mini", temperature: 0.2, max_tokens: 64 });
  await axe(page);
  await shot(page, "74-playground");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Spend" }).click();
  await expect(page.getByRole("heading", { name: "Spend", exact: true })).toBeVisible();
  const perDelegation = page.getByRole("region", { name: "Spend per delegation" });
  const budgeted = perDelegation.getByRole("row").filter({ hasText: agent.delegation_id });
  await expect(budgeted).toContainText("per day (UTC)", { timeout: 20_000 });
  await expect(budgeted).toContainText("$1.000000");
  await expect(page.getByRole("region", { name: "Spend per entity" })).toContainText("team-e2e");
  // The playground's call is the signed-in person's session delegation's: a second row beside the
  // header and the budgeted one (journeys before this one may have spent under delegations of their own).
  await expect.poll(() => perDelegation.getByRole("row").count()).toBeGreaterThanOrEqual(3);
  await page.getByLabel("Window").selectOption("1");
  await expect(page).toHaveURL(/days=1/);
  await expect(budgeted).toBeVisible();
  await axe(page);
  // With a budgeted row, every column of the spend per delegation fits at 1280 px.
  await expectFits(page, "spend with a budgeted delegation");
  await shot(page, "75-spend");
  expect(errors).toEqual([]);
  await context.close();
});

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`benchmarks, models, playground and spend in ${colorScheme} at ${viewport.width} px: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    await page.goto("/reasoning/benchmarks");
    await expect(page.locator(".recharts-radar").first()).toBeVisible({ timeout: 20_000 });
    await checkPage(page, `72-benchmarks-${viewport.width}-${colorScheme}`);
    await page.goto("/reasoning/models");
    await expect(
      page.getByRole("region", { name: "Models of the catalogue" }).getByText("e2e-loopback/gpt-4o-mini"),
    ).toBeVisible({ timeout: 20_000 });
    await checkPage(page, `72-models-${viewport.width}-${colorScheme}`);
    await page.goto("/reasoning/playground");
    await page.getByRole("button", { name: "Call" }).click();
    await expect(page.getByTestId("answer-text")).toHaveText("w0 w1 w2 w3 w4", { timeout: 20_000 });
    await expect(page.getByRole("list", { name: "Attempts" })).toContainText("succeeded");
    await checkPage(page, `74-playground-${viewport.width}-${colorScheme}`);
    await page.goto("/reasoning/spend");
    await expect(page.getByRole("region", { name: "Spend per entity" })).toContainText("team-e2e", { timeout: 20_000 });
    await checkPage(page, `75-spend-${viewport.width}-${colorScheme}`);
    await context.close();
  });
}
