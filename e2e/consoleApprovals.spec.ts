import { createHash } from "node:crypto";
import { join } from "node:path";
import type { APIRequestContext } from "@playwright/test";
import Database from "better-sqlite3";
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
  virtualAuthenticator,
} from "./fixtures";

/**
 * The approver's journey: an agent asks for approval from inside its run → the approver edits
 * the parameters in the inbox, sees the diff and approves with modifications → the run completes
 * with the edited parameters → the provenance explorer shows the chain (the request, the
 * decision, the run). Runs after console.spec.ts (its own project, playwright.config.ts), whose first
 * journey sets svc up and saves the administrator's session.
 */
test.describe.configure({ mode: "serial" });

const BUNDLE = `export default async (input, ctx) => {
  ctx.progress(10, "asking for approval");
  const d = await ctx.approvals.request({
    action_description: "Refund invoice " + input.invoice,
    risk_level: "medium",
    risk_factors: [{ factor: "refund above 500 EUR", severity: "medium" }],
    request_data: { invoice: input.invoice, amount: input.amount, currency: "EUR" },
  });
  return { status: d.status, refunded: d.params };
};
`;

async function deployAsker(request: APIRequestContext, token: string): Promise<string> {
  const bytes = Buffer.from(BUNDLE, "utf8");
  const res = await request.post("/v1/agents/deploy", {
    headers: { Authorization: `Bearer ${token}` },
    data: {
      manifest: {
        name: "refund-asker",
        version: "1.0.0",
        description: "Asks before refunding",
        capabilities: [{ id: "svc_api:approvals:write", evidence: ["asks an approver before each refund"] }],
      },
      bundleBase64: bytes.toString("base64"),
      bundleHash: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
      wait: true,
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { data: { agentId: string } }).data.agentId;
}

/** The run the first journey paused and resumed, for the later pages' checks. */
let pausedRun = "";

test("an agent asks → the approver edits the parameters and approves with modifications → the run completes with them → the chain in the provenance explorer", async ({
  browser,
  request,
}) => {
  const key = mintApiKey();
  const auth = { Authorization: `Bearer ${key.token}` };
  const agentId = await deployAsker(request, key.token);
  const invoked = await request.post(`/v1/agents/${agentId}/invoke`, {
    headers: auth,
    data: { input: { invoice: "INV-2041", amount: 900 } },
  });
  expect(invoked.status()).toBe(202);
  const executionId = ((await invoked.json()) as { id: string }).id;
  const execution = async () =>
    (await (await request.get(`/v1/executions/${executionId}`, { headers: auth })).json()) as {
      status: string;
      progress_message: string | null;
      result_json: unknown;
    };
  await expect
    .poll(async () => (await execution()).progress_message ?? "", { timeout: 30_000 })
    .toMatch(/^Waiting for approval apr_/);

  const { page } = await adminContext(browser, { colorScheme: "light", viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/overview");
  const nav = page.getByRole("navigation", { name: "Console" });
  await expect(nav.getByTestId("nav-pending-approvals")).toBeVisible({ timeout: 15_000 });
  // The overview's "Needs attention" names the waiting request and the run it blocks.
  const attention = page.getByTestId("attention");
  await expect(attention.getByRole("link", { name: /^Approval waiting .*: Refund invoice INV-2041$/ })).toBeVisible();
  await expect(attention).toContainText(`blocks execution ${executionId}`);
  await axe(page);
  await shot(page, "79-overview-approval-waiting");
  await nav.getByRole("link", { name: /Approvals/ }).click();
  await expect(page.getByRole("heading", { name: "Approvals" })).toBeVisible();
  const detail = page.getByLabel("Request detail");
  await expect(detail.getByRole("heading", { name: "Refund invoice INV-2041" })).toBeVisible();
  await expect(page.getByTestId("live-status")).toHaveText("Live", { timeout: 15_000 });
  // Who asks, by name and linked; the requester's passport; the run that waits.
  await expect(detail.getByRole("link", { name: "agent refund-asker" })).toHaveAttribute(
    "href",
    `/agents?agent=${agentId}`,
  );
  await expect(detail.getByRole("link", { name: /^Passport of / })).toHaveAttribute("href", /^\/passports\?did=did/);
  await expect(detail.getByRole("link", { name: `execution ${executionId}` })).toHaveAttribute(
    "href",
    `/executions/${executionId}`,
  );
  await expect(page.getByRole("list", { name: "Pending requests" })).toContainText("refund-asker");
  await expect(page.getByRole("list", { name: "Pending requests" })).not.toContainText(agentId);
  await axe(page);
  await shot(page, "80-approvals-inbox");

  // Invalid JSON is caught in place; the edit shows its diff before anything is sent.
  const params = detail.getByLabel(/Parameters \(JSON/);
  await params.fill("{ nope");
  await expect(detail.getByRole("alert")).toContainText("Not valid JSON");
  await params.fill(JSON.stringify({ invoice: "INV-2041", amount: 500, currency: "EUR" }, null, 2));
  await expect(detail.getByTestId("approval-diff")).toContainText("$.amount");
  await expect(detail.getByTestId("approval-diff")).toContainText("900");
  await expect(detail.getByTestId("approval-diff")).toContainText("500");
  await detail.getByLabel("Comment (optional)").fill("Refund capped at 500");
  await axe(page);
  await shot(page, "81-approvals-edited-diff");
  await detail.getByRole("button", { name: "Approve with modifications" }).click();
  await expect(page.getByText("Nothing waits for you.")).toBeVisible({ timeout: 15_000 });
  // The history: what was decided, by whom, and why.
  const history = page.getByTestId("approval-history");
  await expect(history.getByRole("listitem").first()).toContainText("approved with modifications");
  await expect(history.getByRole("listitem").first()).toContainText("Refund capped at 500");
  await expect(
    history
      .getByRole("listitem")
      .first()
      .getByRole("link", { name: /^Passport of / }),
  ).toBeVisible();
  await shot(page, "82-approvals-empty");

  // The run resumes with the edited parameters.
  await expect.poll(async () => (await execution()).status, { timeout: 30_000 }).toBe("completed");
  expect((await execution()).result_json).toEqual({
    status: "approved_with_modifications",
    refunded: { invoice: "INV-2041", amount: 500, currency: "EUR" },
  });
  await page.goto(`/executions/${executionId}`);
  await expect(page.getByText("completed").first()).toBeVisible();
  // The pause reads as a pause: no error, no "cancelled", no attempt spent, no "resuming" left.
  const attempts = page.getByTestId("execution-attempts");
  await expect(attempts.getByRole("listitem").first()).toContainText("paused");
  await expect(attempts.getByTestId("attempt-paused")).toContainText("Waiting for approval apr_");
  await expect(attempts).not.toContainText("The run was cancelled");
  await expect(attempts.getByTestId("error-text")).toHaveCount(0);
  await expect(page.getByTestId("execution-attempt")).toHaveText("attempt 1/3 · paused once for an approval");
  await expect(page.getByText(/resuming/)).toHaveCount(0);
  await axe(page);
  await shot(page, "83-run-completed");
  pausedRun = executionId;

  // The chain: the request (the run's actor), the decision (the approver), both on the approval.
  const list = (await (await request.get(`/v1/approvals?task_id=${executionId}`, { headers: auth })).json()) as {
    data: Array<{ id: string; provenance_id: string; decision_provenance_id: string; decision_hash: string }>;
  };
  const approval = list.data[0]!;
  await page.goto(`/provenance?resource=${approval.id}`);
  await expect(page.getByRole("cell", { name: "POST /v1/approvals", exact: true }).first()).toBeVisible({
    timeout: 15_000,
  });
  await expect(page.getByRole("cell", { name: /respond/ }).first()).toBeVisible();
  await axe(page);
  await shot(page, "84-approvals-provenance-chain");

  // Dark mode and a phone's width still fit.
  const dark = await adminContext(browser, { colorScheme: "dark", viewport: { width: 390, height: 844 } });
  await dark.page.goto("/approvals");
  await expect(dark.page.getByRole("heading", { name: "Approvals" })).toBeVisible();
  await axe(dark.page);
  const overflow = await dark.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(1);
  await shot(dark.page, "85-approvals-dark-390");
  expect(errors).toEqual([]);
});

/** The e2e server's SQLite database (timestamps written as Prisma writes them). */
function withDatabase<T>(use: (db: Database.Database) => T): T {
  const db = new Database(join(process.env.E2E_DATA_DIR!, "svc.db"));
  try {
    db.pragma("busy_timeout = 5000");
    return use(db);
  } finally {
    db.close();
  }
}

/**
 * Ten minutes pass for a person's console session: the passkey assertion made in it (its
 * sign-in) moves back past the 5-minute step-up window. Signing up signs in with the new passkey,
 * so without this no decision would ask for the confirmation.
 */
function agePasskey(personName: string) {
  const tenMinutesAgo = new Date(Date.now() - 10 * 60_000).toISOString().replace("Z", "+00:00");
  const moved = withDatabase((db) =>
    db
      .prepare(
        `UPDATE "delegation" SET "passkey_asserted_at" = ? WHERE "kind" = 'session' AND "revoked_at" IS NULL AND "passkey_asserted_at" IS NOT NULL AND "delegate_did" IN (SELECT "did" FROM "passport" WHERE "name" = ?)`,
      )
      .run(tenMinutesAgo, personName),
  );
  expect(moved.changes).toBe(1);
}

/** A person's console sessions: how many are live, and how many a later sign-in in their browser replaced. */
function sessionsOf(personName: string): { live: number; replaced: number } {
  return withDatabase(
    (db) =>
      db
        .prepare(
          `SELECT SUM(CASE WHEN d."revoked_at" IS NULL THEN 1 ELSE 0 END) AS live, SUM(CASE WHEN r."reason" = 'replaced by a new sign-in' THEN 1 ELSE 0 END) AS replaced
             FROM "delegation" d LEFT JOIN "revocation" r ON r."delegation_id" = d."id"
            WHERE d."kind" = 'session' AND d."delegate_did" IN (SELECT "did" FROM "passport" WHERE "name" = ?)`,
        )
        .get(personName) as { live: number; replaced: number },
  );
}

test("a high-risk decision asks for the passkey, which confirms it; keyboard shortcuts; several requests decided at once", async ({
  browser,
  request,
}) => {
  // An approver of their own (the administrator signed in minutes ago: their passkey is fresh).
  const { context: adminCtx, page: admin } = await adminContext(browser);
  await admin.goto("/members");
  await admin.getByLabel("Invite as").selectOption("approver");
  await admin.getByRole("button", { name: "Create invitation link" }).click();
  const inviteLink = new URL((await admin.getByTestId("invite-link").textContent())!.trim());
  await adminCtx.close();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await virtualAuthenticator(page);
  await page.goto(inviteLink.pathname + inviteLink.search);
  await page.getByLabel("Your name").fill("Bea Stepup");
  await page.getByRole("button", { name: "Create passkey" }).click();
  await expect(page.getByRole("heading", { name: /Welcome, Bea Stepup/ })).toBeVisible({ timeout: 20_000 });
  agePasskey("Bea Stepup");

  // Three requests filed through /v1 (the key's actor is the organization, not Bea).
  const key = mintApiKey();
  const auth = { Authorization: `Bearer ${key.token}` };
  const file = async (action: string, risk: string, data: object) => {
    const res = await request.post("/v1/approvals", {
      headers: auth,
      data: {
        task_id: `e2e-${action}`,
        agent_id: "agt_e2e",
        action_description: action,
        risk_level: risk,
        request_data: data,
      },
    });
    expect(res.status(), await res.text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const lowA = await file("Refund INV-3001", "low", { amount: 10 });
  const lowB = await file("Refund INV-3002", "low", { amount: 20 });
  const wire = await file("Wire 20,000 EUR to a new supplier", "high", {
    amount: 20000,
    iban: "DE02120300000000202051",
  });
  const approval = async (id: string) =>
    (await (await request.get(`/v1/approvals/${id}`, { headers: auth })).json()) as {
      status: string;
      step_up: string | null;
      responded_by: string | null;
      decision_provenance_id: string | null;
    };

  await page.goto("/approvals");
  const list = page.getByRole("list", { name: "Pending requests" });
  const detail = page.getByLabel("Request detail");
  // Riskiest first: the wire transfer is the current request.
  await expect(detail.getByRole("heading", { name: "Wire 20,000 EUR to a new supplier" })).toBeVisible({
    timeout: 15_000,
  });
  await expect(page.getByTestId("live-status")).toHaveText("Live", { timeout: 15_000 });

  // `a` approves the current request; a high one asks for the passkey first.
  await page.keyboard.press("a");
  const confirm = page.getByRole("button", { name: "Confirm with passkey" });
  await expect(confirm).toBeVisible({ timeout: 15_000 });
  await expect(page.getByText("This request is high risk: confirm it is you with your passkey.")).toBeVisible();
  // Said beforehand, beside the buttons that will ask for it.
  await expect(detail.getByTestId("step-up-note")).toContainText("high risk");
  expect((await approval(wire)).status).toBe("pending");
  await shot(page, "86-approvals-step-up");
  // The soft authenticator answers the prompt; the same decision is sent again and goes through,
  // in the new session that confirmation started: the one it replaced is ended, the inbox stays live.
  expect(sessionsOf("Bea Stepup")).toEqual({ live: 1, replaced: 0 });
  await confirm.click();
  await expect(page.getByText("1 request approved")).toBeVisible({ timeout: 20_000 });
  expect(sessionsOf("Bea Stepup")).toEqual({ live: 1, replaced: 1 });
  await expect(page.getByTestId("live-status")).toHaveText("Live", { timeout: 15_000 });
  await expect.poll(async () => (await approval(wire)).status, { timeout: 15_000 }).toBe("approved");
  const decided = await approval(wire);
  expect(decided.step_up).toBe("passkey");
  expect(decided.responded_by).toMatch(/^did:/);
  const record = await request.get(`/v1/provenance/${decided.decision_provenance_id}`, { headers: auth });
  // Decided in the console: the record is the console procedure's (the same operation as /v1's respond).
  expect(await record.json()).toMatchObject({
    operation: "TRPC approvals.respond",
    actor_did: decided.responded_by,
    decision: "allowed",
  });
  await expect(detail.getByRole("heading", { name: "Wire 20,000 EUR to a new supplier" })).toHaveCount(0);

  // j/k move, x selects; several selected requests are rejected at once, each its own decision.
  await expect(list.getByRole("listitem")).toHaveCount(2, { timeout: 15_000 });
  const current = () => list.locator('button[aria-current="true"]');
  await expect(current()).toContainText("Refund INV-3002");
  await page.keyboard.press("j");
  await expect(current()).toContainText("Refund INV-3001");
  await page.keyboard.press("x");
  await page.keyboard.press("k");
  await expect(current()).toContainText("Refund INV-3002");
  await page.keyboard.press("x");
  await expect(page.getByText("· 2 selected")).toBeVisible();
  await expect(list.getByRole("checkbox", { name: "Select Refund INV-3001" })).toBeChecked();
  await expect(list.getByRole("checkbox", { name: "Select Refund INV-3002" })).toBeChecked();
  await axe(page);
  await shot(page, "87-approvals-two-selected");
  await page.getByRole("button", { name: "Reject selected" }).click();
  await expect(page.getByText("2 requests rejected")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByText("Nothing waits for you.")).toBeVisible({ timeout: 15_000 });
  const [a, b] = [await approval(lowA), await approval(lowB)];
  expect([a.status, b.status]).toEqual(["rejected", "rejected"]);
  expect(a.decision_provenance_id).toMatch(/^prv_/);
  expect(b.decision_provenance_id).toMatch(/^prv_/);
  expect(a.decision_provenance_id).not.toBe(b.decision_provenance_id);
  // A low request needs no step-up.
  expect(a.step_up ?? null).toBeNull();
  expect(errors).toEqual([]);
  await context.close();
});

test("a key that can decide approvals asks for the passkey, in the form, and records who minted it", async ({
  browser,
}) => {
  const { context: adminCtx, page: admin } = await adminContext(browser);
  await admin.goto("/members");
  await admin.getByLabel("Invite as").selectOption("admin");
  await admin.getByRole("button", { name: "Create invitation link" }).click();
  const inviteLink = new URL((await admin.getByTestId("invite-link").textContent())!.trim());
  await adminCtx.close();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await virtualAuthenticator(page);
  await page.goto(inviteLink.pathname + inviteLink.search);
  await page.getByLabel("Your name").fill("Kim Keys");
  await page.getByRole("button", { name: "Create passkey" }).click();
  await expect(page.getByRole("heading", { name: /Welcome, Kim Keys/ })).toBeVisible({ timeout: 20_000 });
  agePasskey("Kim Keys");

  await page.goto("/keys");
  await page.getByRole("button", { name: "Create API key" }).click();
  await page.getByLabel("Name").fill("approvals bot");
  await page.getByRole("checkbox", { name: /svc_api:approvals:read/ }).check();
  await expect(page.getByTestId("key-step-up-note")).toHaveCount(0);
  await page.getByRole("checkbox", { name: /svc_api:approvals:respond/ }).check();
  await expect(page.getByTestId("key-step-up-note")).toContainText(
    "svc_api:approvals:respond can decide approvals: creating this key asks for your passkey",
  );
  await axe(page);
  await shot(page, "88-key-step-up");
  await page.getByRole("button", { name: "Confirm with passkey and create" }).click();
  await expect(page.getByTestId("new-token")).toBeVisible({ timeout: 20_000 });
  await shot(page, "89-key-step-up-created");
  const minted = withDatabase(
    (db) =>
      db
        .prepare(
          `SELECT d."minted_by_did" AS minted_by, p."did" AS kim FROM "delegation" d, "passport" p WHERE d."name" = 'approvals bot' AND p."name" = 'Kim Keys'`,
        )
        .get() as { minted_by: string; kim: string },
  );
  expect(minted.minted_by).toBe(minted.kim);
  expect(sessionsOf("Kim Keys")).toEqual({ live: 1, replaced: 1 });
  expect(errors).toEqual([]);
  await context.close();
});

for (const [colorScheme, viewport] of THEMES_AND_WIDTHS) {
  test(`the approval inbox and its history, the paused run, a requester's passport in ${colorScheme} at ${viewport.width} px`, async ({
    browser,
  }) => {
    expect(pausedRun, "the first journey ran").not.toBe("");
    const { context, page } = await themedAdminContext(browser, colorScheme, viewport);
    const suffix = `${viewport.width}-${colorScheme}`;
    await page.goto("/approvals");
    await expect(page.getByTestId("approval-history")).toBeVisible({ timeout: 15_000 });
    // A phone has no keyboard to use the keys with.
    await expect(page.getByTestId("approval-keys")).toBeVisible({ visible: viewport.width > 768 });
    await checkPage(page, `88-approvals-history-${suffix}`);
    const passport = page
      .getByTestId("approval-history")
      .getByRole("link", { name: /^Passport of / })
      .first();
    await passport.click();
    await expect(page.getByTestId("passport-card")).toBeVisible();
    await expect(page.getByTestId("passport-card").getByRole("heading")).not.toHaveText("");
    await checkPage(page, `89-passport-${suffix}`);
    await page.goto(`/executions/${pausedRun}`);
    await expect(page.getByTestId("attempt-paused")).toBeVisible({ timeout: 15_000 });
    await checkPage(page, `83a-run-paused-${suffix}`);
    await context.close();
  });
}
