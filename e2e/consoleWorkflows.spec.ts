import { generateKeyPairSync } from "node:crypto";
import type { Page } from "@playwright/test";
import { adminContext, axe, expect, mintApiKey, shot, test } from "./fixtures";

/**
 * A workflow with a fork, a condition and an approval node runs to completion while its DAG
 * viewer is open: the nodes change colour as they run, the approval node waits until an approver
 * (a passport holding svc_api:approvals:respond, through /v1) approves, then the join completes.
 * Runs after console.spec.ts (its own project, playwright.config.ts), whose first journey sets svc up and
 * saves the administrator's session.
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

type Dag = {
  nodes: { id: string; node_name: string; status: string; approval_id: string | null }[];
  edges: { id: string; from_node_id: string; to_node_id: string }[];
};

/**
 * Where the DAG's edges cross a node they do not join, or their label overlaps a node: each
 * edge's path sampled every few pixels (in screen coordinates, the viewport's pan and zoom
 * applied), against the boxes of the nodes on screen.
 */
async function edgesThroughNodes(page: Page, dag: Dag): Promise<string[]> {
  const names = Object.fromEntries(dag.nodes.map((n) => [n.id, n.node_name]));
  const ends = Object.fromEntries(dag.edges.map((e) => [e.id, [names[e.from_node_id]!, names[e.to_node_id]!]]));
  return page.evaluate((ends) => {
    const boxes = [...document.querySelectorAll<HTMLElement>('[data-testid^="dag-node-"]')].map((el) => ({
      name: el.dataset.testid!.slice("dag-node-".length),
      r: el.getBoundingClientRect(),
    }));
    const inside = (x: number, y: number, r: DOMRect, inset = 2) =>
      x > r.left + inset && x < r.right - inset && y > r.top + inset && y < r.bottom - inset;
    const found = new Set<string>();
    const edges = [...document.querySelectorAll<SVGGElement>(".react-flow__edge")];
    if (edges.length !== Object.keys(ends).length) found.add(`${edges.length} edges drawn`);
    for (const edge of edges) {
      const [from, to] = ends[edge.dataset.id ?? ""] ?? ["?", "?"];
      const path = edge.querySelector<SVGPathElement>("path.react-flow__edge-path");
      if (!path) continue;
      const ctm = path.getScreenCTM()!;
      const length = path.getTotalLength();
      for (let i = 0; i <= length; i += 2) {
        const p = path.getPointAtLength(i).matrixTransform(ctm);
        for (const b of boxes)
          if (b.name !== from && b.name !== to && inside(p.x, p.y, b.r))
            found.add(`${from}→${to} runs through ${b.name}`);
      }
      const label = edge.querySelector(".react-flow__edge-textwrapper")?.getBoundingClientRect();
      if (label)
        for (const b of boxes)
          if (
            label.right > b.r.left + 2 &&
            label.left < b.r.right - 2 &&
            label.bottom > b.r.top + 2 &&
            label.top < b.r.bottom - 2
          )
            found.add(`${from}→${to}'s label lies on ${b.name}`);
    }
    return [...found];
  }, ends);
}

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

  // While the approval node waits, the overview says so (the approval journey checks the requests'
  // side: earlier journeys may leave older requests open, which come first).
  await expect
    .poll(
      async () =>
        ((await (await request.get(`/v1/workflows/${id}`, { headers: auth })).json()) as Dag).nodes.find(
          (n) => n.node_name === "ask",
        )?.status,
      { timeout: 30_000 },
    )
    .toBe("waiting_approval");
  await page.goto("/overview");
  const attention = page.getByTestId("attention");
  await expect(attention.getByRole("link", { name: "Workflow refund review blocked" })).toBeVisible({
    timeout: 15_000,
  });
  await axe(page);
  await shot(page, "wf-01a-overview-blocked");

  await page.goto(`/workflows/${id}`);
  await expect(page.getByTestId("live-status")).toHaveText("Live");
  const node = (name: string) => page.getByTestId(`dag-node-${name}`);
  // The approval node waits; the branch the condition did not take is skipped; the join waits.
  await expect(node("ask")).toHaveAttribute("data-status", "waiting_approval", { timeout: 30_000 });
  await expect(node("autopay")).toHaveAttribute("data-status", "skipped");
  await expect(node("notify")).toHaveAttribute("data-status", "completed");
  await expect(node("done")).toHaveAttribute("data-status", "pending");
  // Edges go around the nodes they do not join, and their labels sit off the nodes: measured once
  // the flow has drawn every edge (it lays them out after the nodes, later on a busy machine).
  const dagNow = (await (await request.get(`/v1/workflows/${id}`, { headers: auth })).json()) as Dag;
  await expect.poll(() => edgesThroughNodes(page, dagNow)).toEqual([]);
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
  await expect(panel.getByRole("link", { name: approvalId, exact: true })).toHaveAttribute(
    "href",
    `/approvals?id=${approvalId}`,
  );
  await expect(panel.getByRole("heading", { name: "Output" })).toBeVisible();
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
  await page.getByRole("button", { name: "Close the node panel" }).click();
  await expect.poll(() => edgesThroughNodes(page, dagNow)).toEqual([]);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await shot(page, "wf-06-narrow");
  await page.goto("/workflows");
  await axe(page);
  await shot(page, "wf-07-list-dark-narrow");
  expect(errors).toEqual([]);
  await context.close();
});
