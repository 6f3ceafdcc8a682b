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
 * Issue 19's learning journey: two versions of a prompt published through the API → rendered
 * with the form on the prompt registry page → a proposal to move its active version (API) → the
 * administrator approves it in the approval inbox → applies it on the learning page → rolls it
 * back, the prompt's active version following each step. Then the learning page light and dark,
 * at 1280 and 390 px. Runs after console.spec.ts (its own project, playwright.config.ts), whose first
 * journey sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

const KEY = "learn-welcome";
let proposalId = "";

test("publish two versions → render with the form → propose moving the active version → approve in the inbox → apply → roll back", async ({
  browser,
  request,
}) => {
  test.setTimeout(150_000);
  const key = mintApiKey("svc_api:*");
  const headers = { Authorization: `Bearer ${key.token}` };
  const meta = { id: KEY, namespace: "support", scope: "organization", description: "Greets a customer" };
  const input_schema = {
    type: "object",
    properties: { name: { type: "string", title: "Customer name", minLength: 1 } },
    required: ["name"],
  };
  for (const [version, content] of [
    ["1.0.0", "Hello {{name}}."],
    ["1.1.0", "Hello {{name}}, welcome back. How can we help today?"],
  ] as const) {
    const res = await request.post(`/v1/prompts/${KEY}/versions`, {
      headers,
      data: { version, content, meta, input_schema },
    });
    expect(res.status(), await res.text()).toBe(201);
  }
  const activeVersion = async () =>
    ((await (await request.get(`/v1/prompts/${KEY}`, { headers })).json()) as { active_version: string })
      .active_version;
  expect(await activeVersion()).toBe("1.0.0");

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // Render the newer version with the form generated from its input schema.
  await page.goto(`/prompts?key=${KEY}`);
  await page.locator("#preview-version").selectOption("1.1.0");
  await page.getByLabel("Customer name").fill("Ada");
  await page.getByRole("button", { name: "Render" }).click();
  await expect(page.getByTestId("rendered-text")).toHaveText("Hello Ada, welcome back. How can we help today?");
  await shot(page, "90-learning-prompt-rendered");

  // Propose moving the active version to 1.1.0, citing the publish call's record (an unknown
  // explain key is stripped).
  const records = (await (await request.get(`/v1/provenance?limit=100`, { headers })).json()) as {
    data: Array<{ id: string; operation: string }>;
  };
  const publishRecord = records.data.find((r) => r.operation === "POST /v1/prompts/{key}/versions")!;
  expect(publishRecord).toBeTruthy();
  const proposed = await request.post("/v1/svcos/learning/proposals", {
    headers,
    data: {
      kind: "prompt_active_version",
      target: KEY,
      proposed: { active_version: "1.1.0" },
      explain: {
        source: "admin",
        confidence: 0.8,
        scope: "prompt:learn-welcome",
        evidence_refs: [publishRecord.id],
        rollback_target: "1.0.0",
        team_notes: "stripped",
      },
    },
  });
  expect(proposed.status(), await proposed.text()).toBe(201);
  const proposal = (await proposed.json()) as { id: string; approval_id: string; explain: Record<string, unknown> };
  proposalId = proposal.id;
  expect(proposal.explain).not.toHaveProperty("team_notes");

  // The administrator approves it in the inbox, like any other request.
  const nav = page.getByRole("navigation", { name: "Console" });
  await page.goto("/overview");
  await nav.getByRole("link", { name: /Approvals/ }).click();
  await expect(page.getByRole("heading", { name: "Approvals" })).toBeVisible();
  await page
    .getByRole("list", { name: "Pending requests" })
    .getByRole("button", { name: new RegExp(`prompt_active_version of ${KEY}`) })
    .click();
  const detail = page.getByLabel("Request detail");
  await expect(detail.getByRole("heading", { name: new RegExp(`prompt_active_version of ${KEY}`) })).toBeVisible();
  await expect(detail.getByLabel(/Parameters \(JSON/)).toHaveValue(new RegExp(proposal.id));
  await axe(page);
  await shot(page, "91-learning-inbox");
  await detail.getByRole("button", { name: /^Approve/ }).click();
  await expect(page.getByText(/1 request approved/)).toBeVisible({ timeout: 15_000 });

  // The learning page: the proposal approved, its change and evidence; apply.
  await nav.getByRole("link", { name: "Learning" }).click();
  await expect(page.getByRole("heading", { name: "Learning", exact: true })).toBeVisible();
  await page
    .getByRole("list", { name: "Proposals" })
    .getByRole("button", { name: new RegExp(KEY) })
    .first()
    .click();
  const card = page.getByLabel("Proposal detail");
  await expect(card.getByText("approved", { exact: true })).toBeVisible({ timeout: 15_000 });
  await expect(card.getByTestId("proposal-diff")).toContainText('"1.0.0"');
  await expect(card.getByTestId("proposal-diff")).toContainText('"1.1.0"');
  const evidence = card.getByRole("region", { name: "Evidence" });
  await expect(evidence.getByRole("link", { name: publishRecord.id })).toBeVisible();
  await expect(evidence).toContainText("POST /v1/prompts/{key}/versions");
  await axe(page);
  await shot(page, "92-learning-approved");

  await card.getByRole("button", { name: "Apply" }).click();
  const confirmApply = page.getByRole("alertdialog", { name: "Apply this change?" });
  await expect(confirmApply).toContainText('active_version: "1.1.0"');
  await axe(page);
  await shot(page, "93-learning-apply-confirm");
  await confirmApply.getByRole("button", { name: "Apply" }).click();
  await expect(card.getByText("applied", { exact: true }).first()).toBeVisible({ timeout: 15_000 });
  await expect.poll(activeVersion).toBe("1.1.0");
  await expect(card.getByRole("region", { name: "Tuning actions" })).toContainText("apply");
  await shot(page, "94-learning-applied");

  // Roll back: the active version is 1.0.0 again.
  await card.getByRole("button", { name: "Roll back" }).click();
  const confirmRollback = page.getByRole("alertdialog", { name: "Roll this change back?" });
  await expect(confirmRollback).toContainText('active_version: "1.0.0"');
  await confirmRollback.getByRole("button", { name: "Roll back" }).click();
  await expect(card.getByText("rolled back", { exact: true }).first()).toBeVisible({ timeout: 15_000 });
  await expect.poll(activeVersion).toBe("1.0.0");
  await expect(card.getByRole("region", { name: "Tuning actions" })).toContainText("rollback");
  await axe(page);
  await shot(page, "95-learning-rolled-back");

  // The record behind the evidence, in the provenance explorer; and the proposal's own records.
  await evidence.getByRole("link", { name: publishRecord.id }).click();
  await expect(page).toHaveURL(/\/provenance\?resource=/);
  await expect(page.getByRole("cell", { name: "POST /v1/prompts/{key}/versions" }).first()).toBeVisible({
    timeout: 15_000,
  });
  await page.goto(`/provenance?resource=${proposalId}`);
  await expect(page.getByRole("cell", { name: "TRPC learning.rollback" }).first()).toBeVisible({
    timeout: 15_000,
  });
  await shot(page, "96-learning-provenance");
  expect(errors).toEqual([]);
  await context.close();
});

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`the learning page in ${colorScheme} at ${viewport.width} px: axe clean, no sideways scroll`, async ({
    browser,
  }) => {
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    await page.goto(`/learning?id=${proposalId}`);
    await expect(page.getByLabel("Proposal detail").getByText("rolled back", { exact: true }).first()).toBeVisible({
      timeout: 20_000,
    });
    await checkPage(page, `97-learning-${viewport.width}-${colorScheme}`);
    await context.close();
  });
}
