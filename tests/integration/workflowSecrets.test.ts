import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { database } from "@/server/db/client";
import { areaOperations as operations } from "@/server/areas";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { REDACTED } from "@/server/signing/sealedFields";
import { openNodeValues } from "@/server/workflows/sealedOutputs";
import { startWorker, type Worker } from "@/server/worker/worker";
import { apiKey, call, ed25519Jwk, useTestServer, waitFor } from "./harness";
import { deployAndWait } from "./agentsHelpers";

process.env.SVC_SANDBOX_THREADS = "1";

const ctx = useTestServer();
let worker: Worker;
beforeAll(() => {
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;

describe("secrets a workflow's svc nodes answer", () => {
  it("are sealed in workflow_node, shown redacted to a workflows:read key, and still reach the nodes after them", async () => {
    const base = ctx.server.url;
    const passport = await call(base, "POST", "/v1/passports", {
      token: ctx.root.token,
      body: { type: "agent", name: "minted-for", public_key: ed25519Jwk() },
    });
    expect(passport.status).toBe(201);
    const agentId = await deployAndWait(
      base,
      ctx.root.token,
      "wf-secret-check",
      // Says what it was given without repeating it (its own output is not an operation's answer).
      `export default async (input) => {
        const b = input.j.branches;
        return { token_parts: b.mint.token.split(".").length, whsec: b.hook.secret.startsWith("whsec_") };
      }`,
    );
    const started = await call(base, "POST", "/v1/workflows", {
      token: ctx.root.token,
      body: {
        name: "mint-and-pass-on",
        nodes: [
          { id: "f", node_type: "fork" },
          {
            id: "mint",
            node_type: "svc",
            operation: "createDelegationToken",
            input: { delegate_did: passport.body.did, capabilities: ["svc_api:passports:read"], duration_seconds: 600 },
          },
          { id: "hook", node_type: "svc", operation: "getCallbackSecret", input: {} },
          { id: "j", node_type: "join" },
          { id: "check", node_type: "agent", agent_id: agentId },
          {
            id: "c",
            node_type: "condition",
            condition: {
              and: [
                { "==": [{ substr: [{ var: "nodes.mint.output.token" }, 0, 3] }, "eyJ"] },
                { "==": [{ substr: [{ var: "nodes.hook.output.secret" }, 0, 6] }, "whsec_"] },
              ],
            },
          },
          { id: "yes", node_type: "svc", operation: "emitEvent", input: { type: "wf.secret.seen" } },
          { id: "no", node_type: "svc", operation: "emitEvent", input: { type: "wf.secret.unseen" } },
        ],
        edges: [
          { from_node_id: "f", to_node_id: "mint", edge_type: "fork" },
          { from_node_id: "f", to_node_id: "hook", edge_type: "fork" },
          { from_node_id: "mint", to_node_id: "j", edge_type: "join" },
          { from_node_id: "hook", to_node_id: "j", edge_type: "join" },
          { from_node_id: "j", to_node_id: "check", edge_type: "sequence" },
          { from_node_id: "check", to_node_id: "c", edge_type: "sequence" },
          { from_node_id: "c", to_node_id: "yes", edge_type: "condition_true" },
          { from_node_id: "c", to_node_id: "no", edge_type: "condition_false" },
        ],
      },
    });
    expect(started.status).toBe(201);
    const id = started.body.workflow_id as string;

    const reader = await apiKey(["svc_api:workflows:read"]);
    const dag = await waitFor(
      "the workflow to end",
      async () => {
        const res = await call(base, "GET", `/v1/workflows/${id}`, { token: reader.token });
        expect(res.status).toBe(200);
        return res.body.status === "running" ? undefined : res.body;
      },
      30_000,
    );
    expect(dag.status).toBe("completed");
    const nodes = Object.fromEntries(dag.nodes.map((n: { node_name: string }) => [n.node_name, n])) as Record<
      string,
      any
    >;

    // The reader sees that a token was minted, and which delegation it carries, but not the token.
    expect(nodes.mint.output).toMatchObject({ token: REDACTED, capabilities: ["svc_api:passports:read"] });
    expect(nodes.mint.output.delegation_id).toEqual(expect.any(String));
    expect(nodes.hook.output).toEqual({ secret: REDACTED });
    expect(nodes.j.output.branches.mint.token).toBe(REDACTED);
    expect(nodes.check.input.j.branches.hook.secret).toBe(REDACTED);
    const callbackSecret = await call(base, "GET", "/v1/executions/callback-secret", { token: ctx.root.token });
    expect(callbackSecret.body.secret).toMatch(/^whsec_/);
    expect(JSON.stringify(dag)).not.toMatch(JWT);
    expect(JSON.stringify(dag)).not.toContain(callbackSecret.body.secret);

    // The nodes after them were given the real values.
    expect(nodes.check.output).toEqual({ token_parts: 3, whsec: true });
    expect(nodes.yes.status).toBe("completed");
    expect(nodes.no.status).toBe("skipped");

    // At rest (and so in backups): neither the token nor the secret, in any node's row.
    const db = await database();
    const rows = await db.read.workflowNode.findMany({ where: { workflowId: id } });
    const stored = JSON.stringify(rows.map((r) => [r.input, r.output]));
    expect(stored).not.toContain(callbackSecret.body.secret);
    expect(stored).not.toContain("whsec_");
    expect(stored).not.toMatch(JWT);

    // Sealed, not lost: the workflow's run opens the token it minted (dead now: it derived from the
    // workflow's delegation, revoked at its end).
    const mintRow = rows.find((r) => r.key === "mint")!;
    const opened = await openNodeValues(mintRow.output as { token: string }, id);
    expect(opened.token).toMatch(JWT);
    const claims = JSON.parse(Buffer.from(opened.token.split(".")[1]!, "base64url").toString("utf8"));
    expect(claims.jti).toBe(nodes.mint.output.delegation_id);
    // It opens only in its own workflow.
    expect((await openNodeValues(mintRow.output as { token: string }, "wf_other")).token).toBe(REDACTED);
  });
});

describe("operations that answer a secret", () => {
  /** Top-level string fields of an answer named like a credential (`token`, `secret`, `client_secret`…). */
  const credentialFields = (schema: z.ZodType): string[] => {
    if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).flatMap(credentialFields);
    if (!(schema instanceof z.ZodObject)) return [];
    const isString = (field: z.ZodType): boolean =>
      field instanceof z.ZodString ||
      ((field instanceof z.ZodOptional || field instanceof z.ZodNullable) && isString(field.unwrap() as z.ZodType));
    return Object.entries(schema.shape as Record<string, z.ZodType>)
      .filter(([name, field]) => /(^|_)(token|secret)$/.test(name) && isString(field))
      .map(([name]) => name);
  };

  it("declare those fields secret, so a workflow node keeps them sealed", () => {
    const undeclared = operations.flatMap((op) =>
      credentialFields(op.response)
        .filter((f) => !op.secretFields?.includes(f))
        .map((f) => `${op.id}.${f}`),
    );
    expect(undeclared).toEqual([]);
    const answer = (id: string) => operations.find((op) => op.id === id)!.response;
    expect(credentialFields(answer("createWebhook"))).toEqual(["secret"]);
    expect(credentialFields(answer("exchangeSession"))).toEqual(["token"]);
    const declared = Object.fromEntries(
      operations.filter((op) => op.secretFields).map((op) => [op.id, op.secretFields]),
    );
    expect(declared).toMatchObject({
      createDelegationToken: ["token"],
      exchangeSession: ["token"],
      getCallbackSecret: ["secret"],
      rotateCallbackSecret: ["secret"],
      createWebhook: ["secret"],
      rotateWebhookSecret: ["secret"],
    });
  });
});
