import { generateKeyPairSync } from "node:crypto";
import { adminContext, axe, expect, mintApiKey, shot, test } from "./fixtures";

/**
 * A workflow with a fork, a condition and an approval node runs to completion while its DAG
 * viewer is open: the nodes change colour as they run, the approval node waits until an approver
 * (a passport holding svc_api:approvals:respond, through /v1) approves, then the join completes.
 * Named to sort after console.spec.ts, whose first journey sets svc up and saves the
 * administrator's session.
 */
test.describe.configure({ mode: "serial" });

const DEFINITION = {
  name: "refund review",
  input: { amount: 1250 },
  nodes: [
    { id: "start", node_type: "fork" },
    { id: "big", node_type: "condition", condition: { ">": [{ var: "input.amount" }, 1000] } },
    {
      id: "ask",
      node_type: "approval",
      approval: { action_description: "Refund 1,250 EUR", risk_level: "medium", request_data: { amount: 1250 } },
    },
    { id: "autopay", node_type: "svc", operation: "emitEvent", input: { type: "refund.autopay" } },
    { id: "notify", node_type: "svc", operation: "emitEvent", input: { type: "refund.notify" } },
    { id: "done", node_type: "join" },
  ],
  edges: [
    { from_node_id: "start", to_node_id: "big", edge_type: "fork" },
    { from_node_id: "start", to_node_id: "notify", edge_type: "fork" },
    { from_node_id: "big", to_node_id: "ask", edge_type: "condition_true" },
    { from_node_id: "big", to_node_id: "autopay", edge_type: "condition_false" },
    { from_node_id: "ask", to_node_id: "done", edge_type: "join" },
    { from_node_id: "autopay", to_node_id: "done", edge_type: "join" },
    { from_node_id: "notify", to_node_id: "done", edge_type: "join" },
  ],
};

test("a workflow with a fork, a condition and an approval runs to completion while its DAG is open", async ({
  browser,
  request,
}) => {
  test.setTimeout(150_000);
  const key = mintApiKey();
  const auth = { Authorization: `Bearer ${key.token}` };
  const started = await request.post("/v1/workflows", { headers: auth, data: DEFINITION });
  expect(started.status()).toBe(201);
  const { workflow_id: id } = (await started.json()) as { workflow_id: string };

  const { context, page } = await adminContext(browser, {
    colorScheme: "light",
    viewport: { width: 1280, height: 900 },
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/workflows");
  await expect(page.getByRole("link", { name: "refund review" }).first()).toBeVisible();
  await axe(page);
  await shot(page, "wf-01-list");

  await page.goto(`/workflows/${id}`);
  await expect(page.getByTestId("live-status")).toHaveText("Live");
  const node = (name: string) => page.getByTestId(`dag-node-${name}`);
  // The approval node waits; the branch the condition did not take is skipped; the join waits.
  await expect(node("ask")).toHaveAttribute("data-status", "waiting_approval", { timeout: 30_000 });
  await expect(node("autopay")).toHaveAttribute("data-status", "skipped");
  await expect(node("notify")).toHaveAttribute("data-status", "completed");
  await expect(node("done")).toHaveAttribute("data-status", "pending");
  await axe(page);
  await shot(page, "wf-02-waiting-approval");

  // An approver: a passport of the organization with a delegation to respond, through /v1.
  const { publicKey } = generateKeyPairSync("ed25519");
  const passport = await request.post("/v1/passports", {
    headers: auth,
    // Not an agent's passport: an agent may ask for approval, never decide one.
    data: { type: "organization", name: "e2e approver", public_key: publicKey.export({ format: "jwk" }) },
  });
  expect(passport.status()).toBe(201);
  const did = ((await passport.json()) as { did: string }).did;
  const grant = await request.post("/v1/delegation-tokens", {
    headers: auth,
    data: { delegate_did: did, capabilities: ["svc_api:approvals:*"], duration_seconds: 600 },
  });
  expect(grant.status()).toBe(201);
  const approver = { Authorization: `Bearer ${((await grant.json()) as { token: string }).token}` };
  const dag = (await (await request.get(`/v1/workflows/${id}`, { headers: auth })).json()) as {
    nodes: { node_name: string; approval_id: string | null }[];
  };
  const approvalId = dag.nodes.find((n) => n.node_name === "ask")!.approval_id!;
  const decided = await request.post(`/v1/approvals/${approvalId}/respond`, {
    headers: approver,
    data: { decision: "approve", comment: "fine" },
  });
  expect(decided.status(), await decided.text()).toBe(200);

  // Without a reload: the approval node completes, then the join, then the workflow.
  await expect(node("ask")).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
  await expect(node("done")).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
  await expect(page.getByTestId("workflow-status")).toHaveText("completed");
  await shot(page, "wf-03-completed");

  // The approval node's panel: its decision, approver and the decision's provenance record,
  // verified in the browser against the ledger's signed checkpoint like a governed node's.
  await node("ask").click();
  const panel = page.getByTestId("node-panel");
  await expect(panel.getByText(approvalId, { exact: true })).toBeVisible();
  await expect(panel.getByText("decision: approved")).toBeVisible();
  const decisionRecord = panel.getByRole("group", { name: "Decision record" });
  await expect(decisionRecord.getByText("POST /v1/approvals/{id}/respond · allowed")).toBeVisible();
  await decisionRecord.getByRole("button", { name: "Verify inclusion" }).click();
  await expect(decisionRecord.getByTestId("inclusion-result")).toContainText("Inclusion verified", {
    timeout: 20_000,
  });
  await shot(page, "wf-04a-approval-node-panel");
  // A governed node's panel: its provenance record, verified in the browser against the ledger.
  await node("notify").click();
  await panel.getByRole("button", { name: "Verify inclusion" }).click();
  await expect(panel.getByTestId("inclusion-result").or(panel.getByRole("alert"))).toBeVisible({ timeout: 20_000 });
  await axe(page);
  await shot(page, "wf-04-node-panel");

  await page.getByRole("button", { name: "Toggle dark mode" }).click();
  await axe(page);
  await shot(page, "wf-05-dark");
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(node("done")).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, "wf-06-narrow");
  await page.goto("/workflows");
  await axe(page);
  await shot(page, "wf-07-list-dark-narrow");
  expect(errors).toEqual([]);
  await context.close();
});
