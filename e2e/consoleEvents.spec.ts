import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { adminContext, axe, expect, invitedMember, shot, test } from "./fixtures";

/**
 * Events and webhooks in the console: an agent trigger and a webhook to a loopback receiver (the
 * e2e server allows 127.0.0.1 in SVC_OUTBOUND_ALLOW), the secret shown once, a test event
 * delivered and seen in the log without a reload, a failing receiver and a replay, the event log
 * linking to what each event caused; a viewer sees it all and can change nothing. Runs after
 * console.spec.ts (its own project, playwright.config.ts), whose first journey sets svc up and saves the
 * administrator's session.
 */
test.describe.configure({ mode: "serial" });

/** A receiver on an ephemeral loopback port: answers `status`, keeps what it was sent. */
const receiver = {
  status: 200,
  received: [] as { headers: IncomingHttpHeaders; body: string }[],
  server: undefined as Server | undefined,
  url: "",
};

test.beforeAll(async () => {
  receiver.server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      receiver.received.push({ headers: req.headers, body });
      // No keep-alive: a pooled socket the receiver closes between two attempts fails the next one (ECONNRESET) before it reaches the receiver.
      res.writeHead(receiver.status, { "content-type": "text/plain", connection: "close" });
      res.end(receiver.status === 200 ? "thanks" : "receiver down for maintenance");
    });
  });
  await new Promise<void>((resolve) => receiver.server!.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
});

test.afterAll(async () => {
  await new Promise((resolve) => receiver.server?.close(resolve));
});

const TRIGGER_MANIFEST = JSON.stringify({
  name: "console-listener",
  version: "1.0.0",
  description: "Started by console events",
  capabilities: [
    { id: "event_trigger", evidence: ["started by events"] },
    { id: "event_trigger:console.*", evidence: ["reacts to the console's test events"] },
  ],
  on: [{ event: "console.*", description: "Every console event" }],
});

test("an agent trigger and a webhook → secret once → test event delivered live → receiver fails → replay → the event log links to what it caused", async ({
  browser,
}) => {
  test.setTimeout(150_000);
  const { context, page } = await adminContext(browser, { colorScheme: "light" });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // An agent whose manifest subscribes it to console.* events.
  await page.goto("/agents");
  await page.getByRole("button", { name: "Deploy agent" }).click();
  const deploy = page.getByRole("dialog", { name: "Deploy an agent" });
  await deploy.getByLabel("Bundle (.js or .mjs)").setInputFiles("examples/agents/echo.js");
  await expect(deploy.getByTestId("bundle-hash")).toHaveText(/^sha256:/);
  await deploy.getByLabel("Manifest (JSON)").fill(TRIGGER_MANIFEST);
  await deploy.getByRole("button", { name: "Deploy", exact: true }).click();
  await expect(page.getByRole("dialog", { name: "console-listener" }).getByTestId("agent-status")).toHaveText(
    "active",
    { timeout: 20_000 },
  );
  await page.keyboard.press("Escape");

  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByRole("heading", { name: "Webhooks", exact: true })).toBeVisible();
  await expect(page.getByText("agent trigger →")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("link", { name: "console-listener" })).toBeVisible();
  await axe(page);
  await shot(page, "60-webhooks-trigger");

  // Create: the patterns are checked in the browser with the events schema before anything is sent.
  await page.getByRole("button", { name: "Create webhook" }).click();
  const dialog = page.getByRole("dialog", { name: "Create a webhook" });
  await dialog.getByLabel("Target URL").fill(receiver.url);
  await dialog.getByLabel("Event types").fill("Invoice..paid, console.*");
  await dialog.getByRole("button", { name: "Create webhook" }).click();
  await expect(dialog.getByText(/Not an event type or prefix: Invoice\.\.paid/)).toBeVisible();
  await axe(page);
  await shot(page, "61-webhook-create-invalid");
  await dialog.getByLabel("Event types").fill("console.*");
  await dialog.getByLabel("Description (optional)").fill("Loopback receiver");
  await dialog.getByRole("button", { name: "Create webhook" }).click();

  // The secret, once, with its warning and a copy button.
  const secretDialog = page.getByRole("dialog", { name: "Webhook created" });
  await expect(secretDialog.getByTestId("webhook-secret")).toHaveText(/^whsec_/);
  await expect(secretDialog.getByText("shown once", { exact: false })).toBeVisible();
  await expect(secretDialog.getByRole("button", { name: "Copy secret" })).toBeVisible();
  const secret = (await secretDialog.getByTestId("webhook-secret").textContent())!.trim();
  await axe(page);
  await shot(page, "62-webhook-secret-once");
  await secretDialog.getByRole("button", { name: "Done" }).click();
  await expect(page).toHaveURL(/\/webhooks\/[a-z]+_[0-9a-z]+$/);
  const webhookId = page.url().split("/").pop()!;
  await expect(page.getByText(secret)).toHaveCount(0);
  await expect(page.getByTestId("webhook-health")).toHaveText("no deliveries yet");

  // A test event (console.test, under the webhook's console.* prefix), delivered and logged live.
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
  await page.getByRole("button", { name: "Send test event" }).click();
  const rows = page.getByTestId("delivery-row");
  await expect(rows).toHaveCount(1, { timeout: 20_000 });
  await expect(rows.first()).toContainText("delivered");
  await expect(rows.first()).toContainText("200");
  await expect(page.getByTestId("webhook-health")).toHaveText("healthy", { timeout: 20_000 });
  // What the receiver got verifies with the secret shown once (Standard Webhooks).
  expect(receiver.received).toHaveLength(1);
  const got = receiver.received[0]!;
  const verified = new StandardWebhook(secret).verify(got.body, got.headers as Record<string, string>) as {
    type: string;
  };
  expect(verified.type).toBe("console.test");
  await axe(page);
  await shot(page, "63-webhook-delivered");

  // The receiver fails: a replay is logged as a failed attempt, its answer in the details.
  receiver.status = 500;
  await rows
    .first()
    .getByRole("button", { name: /^Replay/ })
    .click();
  await expect(rows.filter({ hasText: "failed" }).first()).toBeVisible({ timeout: 20_000 });
  const failed = rows.filter({ hasText: "failed" }).first();
  await expect(failed).toContainText("500");
  await failed.getByRole("button", { name: /^Show request and response/ }).click();
  const detail = page.getByTestId("delivery-detail").first();
  await expect(detail.getByText("receiver down for maintenance")).toBeVisible();
  // What was sent: the event type and the signed request, never the secret.
  await expect(detail.getByText("webhook-signature")).toBeVisible();
  await expect(detail).toContainText("console.test");
  await expect(page.getByText(secret)).toHaveCount(0);
  await expect(page.getByTestId("webhook-health")).toHaveText(/failing since/, { timeout: 20_000 });
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  await axe(page);
  await shot(page, "64-webhook-replay-failed");
  receiver.status = 200;

  // Settings: the description changes through PATCH.
  await page.getByLabel("Description").fill("Loopback receiver (edited)");
  await page.getByRole("button", { name: "Save settings" }).click();
  await expect(page.locator("dd").filter({ hasText: "Loopback receiver (edited)" })).toBeVisible();

  // Rotate: confirmed, the new secret shown once.
  await page.getByRole("button", { name: "Rotate secret" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Rotate" }).click();
  const rotated = page.getByRole("dialog", { name: "New webhook secret" });
  await expect(rotated.getByTestId("webhook-secret")).toHaveText(/^whsec_/);
  expect((await rotated.getByTestId("webhook-secret").textContent())!.trim()).not.toBe(secret);
  await rotated.getByRole("button", { name: "Done" }).click();

  // The event log: the test event, its two matches, links to the execution and the delivery log.
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Events" }).click();
  await expect(page.getByRole("heading", { name: "Events", exact: true })).toBeVisible();
  await page.getByLabel("Type").fill("Not A Type");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByText("dot notation", { exact: false }).first()).toBeVisible();
  await page.getByLabel("Type").fill("console.test");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/\/events\?type=console\.test/);
  await expect(page.getByRole("cell", { name: "console.test" })).toHaveCount(1);
  await expect(page.getByTestId("event-matches").first()).toHaveText("2");
  await axe(page);
  await shot(page, "65-events");
  await page.getByRole("link", { name: /^evt_/ }).first().click();
  await expect(page.getByRole("heading", { name: "console.test" })).toBeVisible();
  const eventId = page.url().split("/").pop()!;
  await expect(page.getByRole("link", { name: /^Execution exe_/ })).toBeVisible();
  await expect(page.getByRole("link", { name: "Record of this event" })).toHaveAttribute(
    "href",
    `/provenance?resource=${eventId}`,
  );
  await axe(page);
  await shot(page, "66-event-detail");
  await page.getByRole("link", { name: `Delivery log of ${webhookId}` }).click();
  await expect(page).toHaveURL(new RegExp(`/webhooks/${webhookId}\\?event=${eventId}`));
  await expect(page.getByText(`Attempts at event ${eventId}`)).toBeVisible();
  // The test delivery and the replay (a scheduled retry may have followed it).
  await expect(rows.nth(1)).toBeVisible();
  // The platform's own events (the triggered run's execution.* events) may be newer: the filter finds the test event.
  await page.goto("/events?type=console.test");
  await page.getByRole("link", { name: eventId }).click();
  await page.getByRole("link", { name: /^Execution exe_/ }).click();
  await expect(page).toHaveURL(/\/executions\/exe_/);
  await expect(page.getByTestId("execution-status")).toBeVisible();

  // Filters in the URL; a webhook deleted after confirming.
  await page.goto("/webhooks?kind=agent_trigger");
  await expect(page.getByLabel("Kind")).toHaveValue("agent_trigger");
  await expect(page.getByText("agent trigger →")).toBeVisible();
  await expect(page.getByText(receiver.url)).toHaveCount(0);
  await page.goto("/webhooks");
  await page.getByRole("button", { name: "Create webhook" }).click();
  await dialog.getByLabel("Target URL").fill("https://hooks.example.com/svc");
  await dialog.getByLabel("Event types").fill("invoice.paid");
  await dialog.getByRole("button", { name: "Create webhook" }).click();
  await page.getByRole("dialog", { name: "Webhook created" }).getByRole("button", { name: "Done" }).click();
  await expect(page).toHaveURL(/\/webhooks\/[a-z]+_[0-9a-z]+$/);
  await page.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Delete webhook" }).click();
  await expect(page).toHaveURL(/\/webhooks$/);
  await expect(page.getByText("https://hooks.example.com/svc")).toHaveCount(0);

  expect(errors).toEqual([]);
  await context.close();
});

test("a viewer sees webhooks and events and can change nothing", async ({ browser }) => {
  const { context: viewerContext, page: viewer } = await invitedMember(browser, "Wendy Viewer");

  await viewer.goto("/webhooks");
  await expect(viewer.getByText(receiver.url)).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Create webhook" })).toHaveCount(0);
  await viewer.getByText(receiver.url).click();
  await expect(viewer.getByTestId("delivery-row").first()).toBeVisible();
  await expect(
    viewer.getByRole("button", { name: /Send test event|Rotate secret|Delete|Replay|Save settings/ }),
  ).toHaveCount(0);
  await shot(viewer, "67-viewer-webhook");
  await viewer.goto("/events");
  await expect(viewer.getByRole("link", { name: /^evt_/ }).first()).toBeVisible();
  await viewerContext.close();
});
