import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import {
  adminContext,
  axe,
  expect,
  saveAdminState,
  shot,
  slowNavigations,
  test,
  virtualAuthenticator,
} from "./fixtures";

/**
 * The console as a person uses it: first-run set-up with a passkey (Chromium's virtual WebAuthn
 * authenticator), an API key created and revoked, both visible in the provenance explorer.
 */
function setupLink(): string {
  const out = execFileSync(process.execPath, ["bin/svc.mjs", "setup-link"], {
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR!, DATABASE_URL: "" },
  }).toString();
  const link = /\/setup\?token=\S+/.exec(out)?.[0];
  if (!link) throw new Error(`no set-up link: ${out}`);
  return link;
}

test.describe.configure({ mode: "serial" });

test("first-run set-up → passkey → API key → call → revoke → refused → both in the provenance explorer; invite an approver; sign out; user verification", async ({
  page,
  request,
  browser,
}) => {
  // A long journey: generous on a loaded machine.
  test.setTimeout(180_000);
  const { cdp, authenticatorId } = await virtualAuthenticator(page);
  // A second set-up link, made before set-up is done: once it is, the link says it was superseded.
  const [firstLink, supersededLink] = [setupLink(), setupLink()];
  await page.goto(firstLink);
  await expect(page.getByRole("heading", { name: "Set up svc" })).toBeVisible();
  await axe(page);
  await shot(page, "01-setup");
  await page.getByLabel("Your name").fill("Ada Admin");
  await page.getByRole("button", { name: "Create passkey" }).click();
  await expect(page.getByRole("heading", { name: /Welcome, Ada Admin/ })).toBeVisible({ timeout: 20_000 });
  await axe(page);
  await shot(page, "02-overview");
  const laterContext = await browser.newContext();
  const later = await laterContext.newPage();
  await later.goto(supersededLink);
  await expect(later.getByText("This link was superseded.")).toBeVisible();
  await expect(later.getByText(/set-up was completed with another link/)).toBeVisible();
  await expect(later.getByText(/expired/)).toHaveCount(0);
  await axe(later);
  await shot(later, "01b-setup-superseded");
  await later.getByRole("link", { name: "Sign in" }).click();
  await expect(later).toHaveURL(/sign-in/);
  await laterContext.close();

  await page.getByRole("link", { name: "API keys & delegations" }).click();
  await page.getByRole("button", { name: "Create API key" }).click();
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByText("Name the key so you can recognise it later")).toBeVisible();
  await expect(page.getByText("Pick at least one capability")).toBeVisible();
  await shot(page, "03-create-key-invalid");
  await page.getByLabel("Name").fill("e2e key");
  await page.getByRole("checkbox", { name: /svc_api:passports:read/ }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const token = (await page.getByTestId("new-token").textContent())!.trim();
  expect(token.split(".")).toHaveLength(3);
  await shot(page, "04-key-created");
  await page.keyboard.press("Escape");

  const auth = { Authorization: `Bearer ${token}` };
  expect((await request.get("/v1/passports", { headers: auth })).status()).toBe(200);

  const row = page.getByRole("row", { name: /e2e key/ });
  await row.getByRole("button", { name: "Revoke e2e key" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Revoke" }).click();
  await expect(row.getByText("revoked")).toBeVisible();
  await axe(page);
  await shot(page, "05-key-revoked");
  const refused = await request.get("/v1/passports", { headers: auth });
  expect(refused.status()).toBe(401);

  await page.getByRole("link", { name: "Provenance" }).click();
  await expect(page.getByText("TRPC identity.apiKeys.create").first()).toBeVisible();
  await expect(page.getByText("TRPC identity.delegations.revoke").first()).toBeVisible();
  await page.getByLabel("Decision").selectOption("denied");
  await expect(page.getByRole("cell", { name: "GET /v1/passports" }).first()).toBeVisible();
  await page.getByLabel("Decision").selectOption("");
  await axe(page);
  await shot(page, "06-provenance");
  // An older record is certainly under a checkpoint: verify its inclusion with WebCrypto.
  await page.getByRole("cell", { name: "TRPC identity.apiKeys.create" }).first().click();
  await page.getByRole("button", { name: "Verify inclusion in this browser" }).click();
  await expect(page.getByTestId("verification").getByLabel("passed")).toHaveCount(3, { timeout: 10_000 });
  await shot(page, "07-proof-verified");
  await page.keyboard.press("Escape");

  await page.getByRole("button", { name: "Toggle dark mode" }).click();
  await shot(page, "08-provenance-dark");
  for (const path of ["/passports", "/organizations", "/members"]) {
    await page.goto(path);
    await expect(page.locator("h1")).toBeVisible();
    await axe(page);
    await shot(page, `09-${path.slice(1)}`);
  }

  // Register an organization passport, then create the tenant: keyboard only.
  await page.goto("/passports");
  await page.getByRole("button", { name: "Register passport" }).focus();
  await page.keyboard.press("Enter");
  await page.getByLabel("Type").selectOption("organization");
  await page.getByLabel("Name").fill("Acme Corp");
  await page
    .getByLabel("Public key")
    .fill(JSON.stringify(generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" })));
  await page.keyboard.press("Enter");
  await expect(page.getByRole("cell", { name: "Acme Corp" })).toBeVisible();
  await page.goto("/organizations");
  await page.getByRole("button", { name: "Create organization" }).focus();
  await page.keyboard.press("Enter");
  await page.getByLabel("Organization passport").selectOption({ index: 1 });
  await page.getByLabel("Name").fill("Acme tenant");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("cell", { name: "Acme tenant" })).toBeVisible();
  await axe(page);
  await shot(page, "09b-organization-created");

  // Invite an approver, who registers their own passkey in their own browser.
  await page.goto("/members");
  await page.getByLabel("Invite as").selectOption("approver");
  await page.getByRole("button", { name: "Create invitation link" }).click();
  const inviteLink = (await page.getByTestId("invite-link").textContent())!.trim();
  await shot(page, "10-invite");
  const approverContext = await browser.newContext();
  const approver = await approverContext.newPage();
  await virtualAuthenticator(approver);
  await approver.goto(new URL(inviteLink).pathname + new URL(inviteLink).search);
  await expect(approver.getByText("You are invited as approver.", { exact: false })).toBeVisible();
  await approver.getByLabel("Your name").fill("Ann Approver");
  await approver.getByRole("button", { name: "Create passkey" }).click();
  await expect(approver.getByRole("heading", { name: /Welcome, Ann Approver/ })).toBeVisible({ timeout: 20_000 });
  await expect(approver.getByRole("link", { name: "Members" })).toHaveCount(0);
  await approver.goto("/members");
  await expect(approver.getByRole("heading", { name: "Administrators only" })).toBeVisible();
  await shot(approver, "11-approver-refused");
  // Calling an admin procedure directly is refused by the gate (and recorded).
  const direct = await approver.request.post("/api/trpc/members.invite", { data: { role: "admin", hours: 1 } });
  expect(direct.status()).toBe(403);
  // The invitation is spent.
  await approver.goto(new URL(inviteLink).pathname + new URL(inviteLink).search);
  await expect(approver.getByText(/already been used/)).toBeVisible();
  await approverContext.close();

  // Signing out ends the session at once.
  await page.goto("/overview");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/sign-in/);
  await page.goto("/overview");
  await expect(page).toHaveURL(/sign-in/);
  // A sign-in whose user verification fails is refused.
  await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await expect(page.locator("p[role=alert]")).toContainText(/verify you|could not be verified/);
  await axe(page);
  await shot(page, "12-sign-in-refused");
  await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: true });
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await expect(page.getByRole("heading", { name: /Welcome, Ada Admin/ })).toBeVisible({ timeout: 20_000 });
  // The journeys below continue as this administrator.
  await saveAdminState(page.context());
});

test("a viewer is not offered what a viewer cannot do", async ({ browser }) => {
  const { context: admin, page } = await adminContext(browser);
  // An active API key for the viewer to see without a Revoke beside it: made here, so that this
  // test does not depend on another spec file (api.spec.ts) having left one active.
  await page.goto("/keys");
  await page.getByRole("button", { name: "Create API key" }).click();
  await page.getByLabel("Name").fill("viewer-visible key");
  await page.getByRole("checkbox", { name: /svc_api:passports:read/ }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByTestId("new-token")).toBeVisible();
  await page.keyboard.press("Escape");
  await page.goto("/members");
  await page.getByLabel("Invite as").selectOption("viewer");
  await page.getByRole("button", { name: "Create invitation link" }).click();
  const inviteLink = new URL((await page.getByTestId("invite-link").textContent())!.trim());
  await admin.close();

  const context = await browser.newContext();
  const viewer = await context.newPage();
  await virtualAuthenticator(viewer);
  await viewer.goto(inviteLink.pathname + inviteLink.search);
  await viewer.getByLabel("Your name").fill("Vic Viewer");
  await viewer.getByRole("button", { name: "Create passkey" }).click();
  await expect(viewer.getByRole("heading", { name: /Welcome, Vic Viewer/ })).toBeVisible({ timeout: 20_000 });
  await viewer.goto("/keys");
  // Active API keys are listed (the one made above among them), with no Revoke beside them.
  await expect(
    viewer.getByRole("row", { name: /viewer-visible key/ }).getByRole("cell", { name: "active" }),
  ).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Create API key" })).toHaveCount(0);
  await expect(viewer.getByRole("button", { name: /^Revoke/ })).toHaveCount(0);
  await axe(viewer);
  await shot(viewer, "13-viewer-keys");
  await viewer.goto("/passports");
  await expect(viewer.getByRole("cell", { name: "Vic Viewer" })).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Register passport" })).toHaveCount(0);
  // A passport's detail is read-only for a viewer.
  await viewer.getByRole("cell", { name: "Vic Viewer" }).click();
  await expect(viewer.getByRole("dialog").getByLabel("Verification tier")).toBeDisabled();
  await expect(viewer.getByRole("button", { name: "Save tiers" })).toHaveCount(0);
  await viewer.keyboard.press("Escape");
  await viewer.goto("/organizations");
  await expect(viewer.getByRole("heading", { name: "Organizations" })).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Create organization" })).toHaveCount(0);
  await context.close();
});

test("the provenance explorer: filters in the URL, prefix match, console reads hidden, names beside DIDs, export, the overview's link", async ({
  browser,
}) => {
  const { context, page } = await adminContext(browser, { acceptDownloads: true });
  // The overview's refused calls link to the explorer, filtered.
  await page.goto("/overview");
  await page.getByRole("link", { name: "see them in Provenance" }).click();
  await expect(page).toHaveURL(/\/provenance\?decision=denied/);
  await expect(page.getByLabel("Decision")).toHaveValue("denied");
  await expect(page.getByRole("cell", { name: "GET /v1/passports" }).first()).toBeVisible();

  // A prefix of the operation, in the URL, survives a reload.
  await page.getByLabel("Operation starts with").fill("GET /v1/pass");
  await expect(page).toHaveURL(/operation=GET(\+|%20)%2Fv1%2Fpass/);
  await page.reload();
  await expect(page.getByLabel("Decision")).toHaveValue("denied");
  await expect(page.getByLabel("Operation starts with")).toHaveValue("GET /v1/pass");
  await expect(page.getByRole("cell", { name: "GET /v1/passports" }).first()).toBeVisible();
  const ops = await page.locator("tbody tr td:nth-child(3)").allTextContents();
  expect(ops.length).toBeGreaterThan(0);
  expect(ops.every((o) => o.startsWith("GET /v1/pass"))).toBe(true);

  // Export downloads what the filters select, one JSON record per line.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Export NDJSON" }).click(),
  ]);
  const { readFileSync } = await import("node:fs");
  const lines = readFileSync((await download.path())!, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { operation: string; decision: string });
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.every((r) => r.decision === "denied" && r.operation.startsWith("GET /v1/pass"))).toBe(true);

  // A record links to its trace: the e2e server exports spans (to a sink, playwright.config.ts) and
  // SVC_TRACE_URL_TEMPLATE names where traces are read; the link carries the record's own trace id.
  // The oldest of them: a call's own record. Anonymous refusals past the first of a minute are
  // counted in one record written when the minute closes (no request, so no trace), which may be
  // the newest.
  await page.getByRole("cell", { name: "GET /v1/passports" }).last().click();
  const traced = page.getByRole("dialog");
  const traceLink = traced.getByRole("link", { name: "View trace" });
  await expect(traceLink).toHaveAttribute("href", /^http:\/\/127\.0\.0\.1:16686\/trace\/[0-9a-f]{32}$/);
  const traceId = (await traceLink.getAttribute("href"))!.split("/").pop()!;
  await expect(traced.locator("dt", { hasText: /^trace_id$/ }).locator("+ dd")).toHaveText(traceId);
  await page.keyboard.press("Escape");
  await expect(traced).toHaveCount(0);

  // The console's own page-view reads are hidden unless asked for; its writes are not.
  await page.getByRole("button", { name: "Clear filters" }).click();
  await expect(page).toHaveURL(/\/provenance$/);
  await expect(page.getByRole("cell", { name: "TRPC identity.apiKeys.create" }).first()).toBeVisible();
  await expect(page.getByRole("cell", { name: "TRPC provenance.list" })).toHaveCount(0);
  // Who acted, by name as well as DID.
  await expect(page.getByRole("cell", { name: /Ada Admin/ }).first()).toBeVisible();

  // A record's hashes wrap in the dialog: no box scrolls inside it.
  await page.getByRole("cell", { name: "TRPC identity.apiKeys.create" }).first().click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByText("leaf_hash")).toBeVisible();
  expect(
    await dialog
      .locator("dl")
      .evaluate((el) => ({ overflow: getComputedStyle(el).overflowY, clipped: el.scrollHeight > el.clientHeight + 1 })),
  ).toEqual({ overflow: "visible", clipped: false });
  await shot(page, "15-provenance-record");
  await page.keyboard.press("Escape");

  await page.getByLabel("Show the console's own page-view reads").check();
  await expect(page).toHaveURL(/console_reads=include/);
  await expect(page.getByRole("cell", { name: "TRPC provenance.list" }).first()).toBeVisible();
  await axe(page);
  await shot(page, "14-provenance-filters");

  // Two filters changed in quick succession, on a slow network: the operation is typed after the
  // decision's URL was asked for and before it has rendered; that late render puts nothing back.
  const stopHolding = await slowNavigations(page);
  await page.getByLabel("Decision").selectOption("allowed");
  await page.waitForTimeout(500); // past the filters' 300 ms pause: the decision's URL is on its way
  await page.getByLabel("Operation starts with").fill("TRPC identity");
  await expect(page).toHaveURL(
    (u) =>
      u.searchParams.get("decision") === "allowed" &&
      u.searchParams.get("operation") === "TRPC identity" &&
      u.searchParams.get("console_reads") === "include",
    { timeout: 15_000 },
  );
  await stopHolding();
  await expect(page.getByLabel("Decision")).toHaveValue("allowed");
  await expect(page.getByLabel("Operation starts with")).toHaveValue("TRPC identity");
  await expect(page.getByRole("cell", { name: "TRPC identity.apiKeys.create" }).first()).toBeVisible();
  await expect(page.getByRole("cell", { name: "TRPC provenance.list" })).toHaveCount(0);
  await context.close();
});

test("an unknown set-up link is refused with a clear message", async ({ page }) => {
  await page.goto(`/setup?token=${"x".repeat(43)}`);
  await expect(page.getByText("This link is not valid.")).toBeVisible();
  await page.goto("/overview");
  await expect(page).toHaveURL(/sign-in/);
});
