import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { computePromptAffinity } from "@/server/prompts/computePromptAffinity";
import { forgetDiscoveredModels } from "@/server/reasoning/discoverModels";
import { forgetRoutingCatalogue } from "@/server/reasoning/routingCatalogue";
import { resetReasoningSettings } from "@/server/reasoning/settings";
import { startFakeOpenAI, type FakeOpenAI } from "./peers/fakeOpenAI";
import { learningApplier } from "@/server/learning/appliers";
import { setActiveVersion } from "@/server/prompts/setActiveVersion";
import { apiKey, call, useTestServer } from "./harness";

const ctx = useTestServer();

const meta = (key: string, namespace = "support") => ({ id: key, namespace, scope: "organization", description: "" });
const publish = (key: string, body: Record<string, unknown>, token = ctx.root.token) =>
  call(ctx.server.url, "POST", `/v1/prompts/${key}/versions`, { token, body: { meta: meta(key), ...body } });
const get = (path: string, token = ctx.root.token) => call(ctx.server.url, "GET", path, { token });
const post = (path: string, body?: unknown, token = ctx.root.token) =>
  call(ctx.server.url, "POST", path, { token, ...(body === undefined ? {} : { body }) });
const render = (key: string, body: Record<string, unknown>) => post(`/v1/prompts/${key}/render`, body);

describe("publishing", () => {
  it("creates the profile with the first version, which becomes active", async () => {
    const res = await publish("greet", { version: "1.0.0", content: "Hello {{name}}" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      prompt_key: "greet",
      prompt_uri: "prompt://support/greet",
      version: "1.0.0",
      status: "active",
      extends_uri: null,
      input_schema: null,
    });
    const profile = await get("/v1/prompts/greet");
    expect(profile.body).toMatchObject({ active_version: "1.0.0", namespace: "support", scope: "organization" });
    expect(profile.body.recommended_model).toBeNull();
  });

  it("orders versions as semver does: 1.10.0 > 1.9.0, pre-releases below their release", async () => {
    for (const v of ["1.0.0-alpha.1", "1.0.0-alpha.2", "1.0.0-beta", "1.0.0", "1.9.0", "1.10.0"])
      expect((await publish("order", { version: v, content: v })).status).toBe(201);
    const lower = await publish("order", { version: "1.9.5", content: "x" });
    expect(lower.status).toBe(409);
    expect(lower.body.detail).toMatch(/not greater than 1\.10\.0/);
    expect((await publish("order", { version: "1.10.0-rc.1", content: "x" })).status).toBe(409);
    expect((await publish("order", { version: "1.11.0-rc.1", content: "x" })).status).toBe(201);
    const list = await get("/v1/prompts/order/versions?limit=3");
    expect(list.body.data.map((v: { version: string }) => v.version)).toEqual(["1.11.0-rc.1", "1.10.0", "1.9.0"]);
    expect(list.body.pagination.has_more).toBe(true);
    const next = await get(`/v1/prompts/order/versions?limit=10&cursor=${list.body.pagination.next_cursor}`);
    expect(next.body.data.map((v: { version: string }) => v.version)).toEqual([
      "1.0.0",
      "1.0.0-beta",
      "1.0.0-alpha.2",
      "1.0.0-alpha.1",
    ]);
    expect(next.body.pagination).toEqual({ has_more: false, next_cursor: null });
  });

  it("keeps published versions immutable and refuses what is not semver", async () => {
    const again = await publish("greet", { version: "1.0.0", content: "changed" });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/immutable/);
    const bad = await publish("greet", { version: "v2", content: "x" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "version", code: "INVALID_FORMAT" });
    expect((await get("/v1/prompts/greet/versions/1.0.0")).body.content).toBe("Hello {{name}}");
  });

  it("refuses an input_schema that is not a JSON Schema, and a template that does not parse", async () => {
    const schema = await publish("bad", { version: "1.0.0", content: "x", input_schema: { type: "nope" } });
    expect(schema.status).toBe(400);
    expect(schema.body.errors[0].field).toMatch(/^input_schema/);
    expect(schema.body.errors[0].code).toBe("INVALID_SCHEMA");
    const template = await publish("bad", { version: "1.0.0", content: "{{#open}} never closed" });
    expect(template.status).toBe(400);
    expect(template.body.errors[0]).toMatchObject({ field: "content", code: "INVALID_TEMPLATE" });
    expect((await get("/v1/prompts/bad")).status).toBe(404);
  });

  it("reads an input_schema in the dialect its $schema names: 2020-12 and 2019-09 as well as draft-07", async () => {
    const tuple = await publish("dialect-2020", {
      version: "1.0.0",
      content: "{{#point}}{{.}} {{/point}}",
      input_schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
        required: ["point"],
      },
    });
    expect(tuple.status, JSON.stringify(tuple.body)).toBe(201);
    expect((await render("dialect-2020", { inputs: { point: [1, 2] } })).body.text).toBe("1 2 ");
    // prefixItems is a 2020-12 keyword: read as draft-07 it would be ignored and these would pass.
    const wrongType = await render("dialect-2020", { inputs: { point: ["x", 2] } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors[0]).toMatchObject({ field: "/inputs/point/0", code: "INVALID_TYPE" });
    expect((await render("dialect-2020", { inputs: { point: [1, 2, 3] } })).status).toBe(400);

    const unevaluated = await publish("dialect-2019", {
      version: "1.0.0",
      content: "{{name}}",
      input_schema: {
        $schema: "https://json-schema.org/draft/2019-09/schema",
        type: "object",
        properties: { name: { type: "string" } },
        unevaluatedProperties: false,
      },
    });
    expect(unevaluated.status, JSON.stringify(unevaluated.body)).toBe(201);
    expect((await render("dialect-2019", { inputs: { name: "Ann" } })).status).toBe(200);
    expect((await render("dialect-2019", { inputs: { name: "Ann", extra: 1 } })).status).toBe(400);

    // A schema that is not valid in its own dialect is refused with its dialect's reasons.
    const bad = await publish("dialect-bad", {
      version: "1.0.0",
      content: "x",
      input_schema: { $schema: "https://json-schema.org/draft/2020-12/schema", prefixItems: "nope" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: "INVALID_SCHEMA" });
    // A dialect svc does not read is a clear 400, not a 500.
    const draft04 = await publish("dialect-04", {
      version: "1.0.0",
      content: "x",
      input_schema: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" },
    });
    expect(draft04.status).toBe(400);
    expect(draft04.body.errors[0]).toMatchObject({ field: "input_schema.$schema", code: "INVALID_SCHEMA" });
  });

  it("refuses a meta.id other than the key, and a namespace change", async () => {
    const wrong = await call(ctx.server.url, "POST", "/v1/prompts/greet/versions", {
      token: ctx.root.token,
      body: { version: "2.0.0", content: "x", meta: meta("other") },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].field).toBe("meta.id");
    const moved = await call(ctx.server.url, "POST", "/v1/prompts/greet/versions", {
      token: ctx.root.token,
      body: { version: "2.0.0", content: "x", meta: meta("greet", "sales") },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.errors[0].field).toBe("meta.namespace");
  });

  it("needs svc_api:prompts:publish to publish, :read to read", async () => {
    const reader = await apiKey(["svc_api:prompts:read"]);
    expect((await publish("greet", { version: "3.0.0", content: "x" }, reader.token)).status).toBe(403);
    expect((await get("/v1/prompts/greet", reader.token)).status).toBe(200);
    const none = await apiKey(["svc_api:agents:read"]);
    expect((await get("/v1/prompts", none.token)).status).toBe(403);
  });
});

describe("extends", () => {
  beforeAll(async () => {
    expect(
      (await publish("base", { version: "1.0.0", content: "You are {{role}}.\n{{> content}}\nBe brief." })).status,
    ).toBe(201);
    expect(
      (
        await publish("middle", {
          version: "1.0.0",
          content: "Customer: {{customer}}",
          extends_uri: "prompt://support/base@1.0.0",
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await publish("leaf", {
          version: "1.0.0",
          content: "Ticket: {{ticket}}",
          extends_uri: "prompt://support/middle@1.0.0",
          input_schema: {
            type: "object",
            properties: { ticket: { type: "string" }, customer: { type: "string" }, role: { type: "string" } },
            required: ["ticket", "customer"],
          },
        })
      ).status,
    ).toBe(201);
  });

  it("renders a three-level chain: the child at {{> content}}, or after a blank line", async () => {
    const res = await render("leaf", { inputs: { ticket: "Login fails", customer: "Acme", role: "a support agent" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      prompt_key: "leaf",
      version: "1.0.0",
      text: "You are a support agent.\nCustomer: Acme\n\nTicket: Login fails\nBe brief.",
    });
  });

  it("renders the active version by default, no HTML escaping, no prototype lookups", async () => {
    const res = await render("greet", { inputs: { name: "<Ann & Bo>" } });
    expect(res.body.text).toBe("Hello <Ann & Bo>");
    expect(
      (
        await publish("proto", {
          version: "1.0.0",
          content: "[{{constructor}}][{{toString}}][{{list.map}}][{{list.length}}]",
        })
      ).status,
    ).toBe(201);
    expect((await render("proto", { inputs: { list: [1, 2] } })).body.text).toBe("[][][][2]");
  });

  it("never parses inputs as template: a child's text with tags is inserted as text", async () => {
    const res = await render("leaf", { inputs: { ticket: "{{role}}", customer: "{{> content}}", role: "R" } });
    expect(res.body.text).toBe("You are R.\nCustomer: {{> content}}\n\nTicket: {{role}}\nBe brief.");
  });

  it("validates inputs against the chain's schemas, errors naming JSON Pointers", async () => {
    const res = await render("leaf", { inputs: { ticket: 42 } });
    expect(res.status).toBe(400);
    const fields = res.body.errors.map((e: { field: string; code: string }) => `${e.field} ${e.code}`);
    expect(fields).toEqual(
      expect.arrayContaining(["/inputs/ticket INVALID_TYPE", "/inputs/customer REQUIRED_FIELD_MISSING"]),
    );
  });

  it("refuses an extends_uri that does not resolve, or that is the version itself", async () => {
    const missing = await publish("x1", { version: "1.0.0", content: "x", extends_uri: "prompt://support/base@9.0.0" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: "extends_uri", code: "EXTENDS_UNRESOLVED" });
    const self = await publish("x1", { version: "1.0.0", content: "x", extends_uri: "prompt://support/x1@1.0.0" });
    expect(self.status).toBe(400);
    expect(self.body.errors[0]).toMatchObject({ field: "extends_uri", code: "EXTENDS_CYCLE" });
    const range = await publish("x1", { version: "1.0.0", content: "x", extends_uri: "prompt://support/base@^1" });
    expect(range.status).toBe(400);
    expect(range.body.errors[0].code).toBe("INVALID_FORMAT");
  });

  it("refuses a chain that comes back to the version being published", async () => {
    // A cycle needs a stored chain that reaches the new version: forge one (the API cannot).
    const db = (await database()).read;
    const base = await db.promptVersion.findFirstOrThrow({ where: { promptKey: "base", version: "1.0.0" } });
    const cyc = await publish("cyc", { version: "1.0.0", content: "c" });
    expect(cyc.status).toBe(201);
    const forged = await db.promptVersion.findFirstOrThrow({ where: { promptKey: "cyc", version: "1.0.0" } });
    await db.promptVersion.update({ where: { id: base.id }, data: { extendsId: forged.id } });
    try {
      const res = await publish("cyc", { version: "1.0.0", content: "c", extends_uri: "prompt://support/base@1.0.0" });
      expect(res.status).toBe(409); // the version exists; a new one:
      const again = await publish("cyc", {
        version: "1.0.1",
        content: "c",
        extends_uri: "prompt://support/base@1.0.0",
      });
      expect(again.status).toBe(201); // 1.0.1 is not in base's chain (1.0.0 is): no cycle
      await db.promptVersion.update({
        where: { id: base.id },
        data: {
          extendsId: (await db.promptVersion.findFirstOrThrow({ where: { promptKey: "cyc", version: "1.0.1" } })).id,
        },
      });
      const cycle = await publish("cyc", {
        version: "1.0.2",
        content: "c",
        extends_uri: "prompt://support/base@1.0.0",
      });
      expect(cycle.status).toBe(400);
      expect(cycle.body.errors[0].code).toBe("EXTENDS_CYCLE");
    } finally {
      await db.promptVersion.update({ where: { id: base.id }, data: { extendsId: null } });
    }
  });
});

describe("ranges", () => {
  beforeAll(async () => {
    for (const v of ["1.2.0", "1.2.5", "1.3.0", "2.0.0-rc.1", "2.0.0"])
      expect((await publish("ranged", { version: v, content: `v${v}` })).status).toBe(201);
  });

  it("answers the highest version a range matches", async () => {
    expect((await get("/v1/prompts/ranged/versions/%5E1.2")).body.version).toBe("1.3.0");
    expect((await get("/v1/prompts/ranged/versions/~1.2.0")).body.version).toBe("1.2.5");
    expect((await get("/v1/prompts/ranged/versions/1.x")).body.version).toBe("1.3.0");
    expect((await get("/v1/prompts/ranged/versions/%3E%3D2.0.0-rc.0")).body.version).toBe("2.0.0");
    expect((await get("/v1/prompts/ranged/versions/2.0.0-rc.1")).body.version).toBe("2.0.0-rc.1");
    expect((await get("/v1/prompts/ranged/versions/%5E3")).status).toBe(404);
    expect((await get("/v1/prompts/ranged/versions/not-a-range")).status).toBe(400);
    expect((await render("ranged", { version: "^1.2", inputs: {} })).body).toMatchObject({
      version: "1.3.0",
      text: "v1.3.0",
    });
  });
});

describe("active version and deprecation", () => {
  beforeAll(async () => {
    for (const v of ["1.0.0", "1.1.0", "1.2.0"])
      expect((await publish("moves", { version: v, content: `v${v}` })).status).toBe(201);
  });

  it("moves the active version, recorded in the history with the request id", async () => {
    // Rendered (and its chain cached) before the move: the move is seen at the next render.
    expect((await render("moves", { inputs: {} })).body.text).toBe("v1.0.0");
    const moved = await post("/v1/prompts/moves/active-version", { version: "1.2.0" });
    expect(moved.status).toBe(200);
    expect(moved.body.active_version).toBe("1.2.0");
    expect((await render("moves", { inputs: {} })).body.text).toBe("v1.2.0");
    const history = await get("/v1/prompts/moves/history");
    expect(
      history.body.data.map((h: { change: string; from: string | null; to: string }) => [h.change, h.from, h.to]),
    ).toEqual([
      ["active_version", "1.0.0", "1.2.0"],
      ["active_version", null, "1.0.0"],
    ]);
    expect(history.body.data[0]).toMatchObject({ source: "call", proposal_id: null });
    expect(history.body.data[0].request_id).toMatch(/^req_/);
    expect((await post("/v1/prompts/moves/active-version", { version: "9.9.9" })).status).toBe(404);
  });

  it("deprecates a version once; not the active one; a deprecated one cannot become active", async () => {
    const active = await post("/v1/prompts/moves/versions/1.2.0/deprecate");
    expect(active.status).toBe(409);
    const dep = await post("/v1/prompts/moves/versions/1.1.0/deprecate");
    expect(dep.status).toBe(200);
    expect(dep.body.status).toBe("deprecated");
    const twice = await post("/v1/prompts/moves/versions/1.1.0/deprecate");
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ current_state: "deprecated", requested_state: "deprecated" });
    const activate = await post("/v1/prompts/moves/active-version", { version: "1.1.0" });
    expect(activate.status).toBe(409);
    // Still readable and renderable by its exact version; no range picks it.
    expect((await get("/v1/prompts/moves/versions/1.1.0")).body.status).toBe("deprecated");
    expect((await render("moves", { version: "1.1.0", inputs: {} })).body.text).toBe("v1.1.0");
    expect((await get("/v1/prompts/moves/versions/~1.1.0")).status).toBe(404);
    const history = await get("/v1/prompts/moves/history?limit=1");
    expect(history.body.data[0]).toMatchObject({ change: "deprecation", to: "1.1.0" });
  });

  it("lists prompts by key with filters and cursors", async () => {
    expect(
      (await publish("zzz.sales", { version: "1.0.0", content: "s", meta: meta("zzz.sales", "sales") })).status,
    ).toBe(201);
    const sales = await get("/v1/prompts?namespace=sales");
    expect(sales.body.data.map((p: { prompt_key: string }) => p.prompt_key)).toEqual(["zzz.sales"]);
    const first = await get("/v1/prompts?limit=2");
    expect(first.body.data).toHaveLength(2);
    const second = await get(`/v1/prompts?limit=2&cursor=${first.body.pagination.next_cursor}`);
    expect(second.body.data[0].prompt_key > first.body.data[1].prompt_key).toBe(true);
    expect((await get("/v1/prompts?cursor=forged.cursor")).status).toBe(400);
  });
});

describe("learning appliers", () => {
  it("validate, read and apply the active version, restoring it on rollback", async () => {
    const db = (await database()).read;
    const orgDid = ctx.root.orgDid;
    const applier = learningApplier("prompt_active_version")!;
    expect(applier).toBeDefined();
    await expect(applier.validate(db, orgDid, "nope", { active_version: "1.0.0" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(applier.validate(db, orgDid, "moves", { active_version: "1.1.0" })).rejects.toMatchObject({
      status: 400,
      extra: { errors: [expect.objectContaining({ field: "/active_version", code: "VERSION_DEPRECATED" })] },
    });
    await expect(applier.validate(db, orgDid, "moves", { active_version: "1.0.0", x: 1 })).rejects.toMatchObject({
      status: 400,
    });
    await applier.validate(db, orgDid, "moves", { active_version: "1.0.0" });
    const previous = await applier.current(db, orgDid, "moves");
    expect(previous).toEqual({ active_version: "1.2.0" });
    await applier.apply(
      db,
      orgDid,
      "moves",
      { active_version: "1.0.0" },
      { actorDid: "did:x", proposalId: "lrn_1", action: "apply" },
    );
    expect(await applier.current(db, orgDid, "moves")).toEqual({ active_version: "1.0.0" });
    await applier.apply(db, orgDid, "moves", previous, { actorDid: "did:x", proposalId: "lrn_1", action: "rollback" });
    expect(await applier.current(db, orgDid, "moves")).toEqual(previous);
    const history = await get("/v1/prompts/moves/history?limit=2");
    expect(history.body.data.map((h: { source: string; proposal_id: string }) => [h.source, h.proposal_id])).toEqual([
      ["learning_rollback", "lrn_1"],
      ["learning_apply", "lrn_1"],
    ]);
    // The same code as the service the learning helper calls directly.
    await setActiveVersion(db, orgDid, "moves", "1.2.0", { actorDid: "did:x", source: "call" });
  });

  it("set and clear the recommended model", async () => {
    const db = (await database()).read;
    const orgDid = ctx.root.orgDid;
    const applier = learningApplier("prompt_recommended_model")!;
    await expect(applier.validate(db, orgDid, "moves", { recommended_model: "no-such-model" })).rejects.toMatchObject({
      status: 400,
      extra: { errors: [expect.objectContaining({ field: "/recommended_model", code: "UNKNOWN_MODEL" })] },
    });
    await applier.validate(db, orgDid, "moves", { recommended_model: null });
    expect(await applier.current(db, orgDid, "moves")).toEqual({ recommended_model: null });
    await applier.apply(
      db,
      orgDid,
      "moves",
      { recommended_model: "m1" },
      { actorDid: "did:x", proposalId: "lrn_2", action: "apply" },
    );
    expect((await get("/v1/prompts/moves")).body.recommended_model).toBe("m1");
    await applier.apply(
      db,
      orgDid,
      "moves",
      { recommended_model: null },
      { actorDid: "did:x", proposalId: "lrn_2", action: "rollback" },
    );
    expect(await applier.current(db, orgDid, "moves")).toEqual({ recommended_model: null });
  });
});

describe("reasoning calls attributed to a prompt", () => {
  let peer: FakeOpenAI;
  beforeAll(async () => {
    peer = await startFakeOpenAI(["m1"]);
    process.env.SVC_OUTBOUND_ALLOW = peer.hostPort;
    resetConfig();
    process.env.SVC_MODEL_PROVIDERS = JSON.stringify([
      {
        name: "fake",
        kind: "openai-compatible",
        base_url: peer.baseUrl,
        api_key: "sk-test",
        models: [{ model_id: "m1", input_cost_per_million: 1, output_cost_per_million: 2 }],
      },
    ]);
    resetReasoningSettings();
    forgetDiscoveredModels();
    forgetRoutingCatalogue();
  });
  afterAll(async () => {
    delete process.env.SVC_MODEL_PROVIDERS;
    resetReasoningSettings();
    forgetDiscoveredModels();
    forgetRoutingCatalogue();
    await peer.close();
  });

  it("renders the prompt as the system message and records its key and version", async () => {
    const res = await post("/v1/reasoning/think", {
      prompt: { key: "leaf", inputs: { ticket: "T1", customer: "C1", role: "R" } },
      messages: [{ role: "user", content: "Go." }],
    });
    expect(res.status).toBe(200);
    const sent = peer.requests.at(-1)!;
    expect(sent.messages[0]).toEqual({ role: "system", content: "You are R.\nCustomer: C1\n\nTicket: T1\nBe brief." });
    expect(sent.messages[1]).toEqual({ role: "user", content: "Go." });
    const id = res.body.metadata.call_id;
    const recorded = await get(`/v1/reasoning/calls/${id}`);
    expect(recorded.body).toMatchObject({ prompt_key: "leaf", prompt_version: "1.0.0" });

    // Without messages the rendered text is the only (user) message.
    const alone = await post("/v1/reasoning/think", { prompt: { key: "greet", inputs: { name: "Ann" } } });
    expect(alone.status).toBe(200);
    expect(peer.requests.at(-1)!.messages).toEqual([{ role: "user", content: "Hello Ann" }]);
  });

  it("refuses bad inputs with pointers under /prompt/inputs, an unknown prompt, and no messages at all", async () => {
    const bad = await post("/v1/reasoning/think", { prompt: { key: "leaf", inputs: {} } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(["/prompt/inputs/ticket", "/prompt/inputs/customer"]),
    );
    const unknown = await post("/v1/reasoning/think", { prompt: { key: "nope", inputs: {} } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: "/prompt/key", code: "UNKNOWN_PROMPT" });
    const version = await post("/v1/reasoning/think", { prompt: { key: "greet", version: "^9", inputs: {} } });
    expect(version.body.errors[0]).toMatchObject({ field: "/prompt/version", code: "UNKNOWN_VERSION" });
    const empty = await post("/v1/reasoning/think", {});
    expect(empty.status).toBe(400);
    expect(empty.body.errors[0].field).toBe("messages");
  });

  it("stores feedback signals, keeping the score working", async () => {
    const res = await post("/v1/reasoning/think", { prompt: { key: "greet", inputs: { name: "Bo" } } });
    const id = res.body.metadata.call_id;
    const signal = await post(`/v1/reasoning/calls/${id}/feedback`, { signal: "rephrase" });
    expect(signal.status).toBe(200);
    expect(signal.body.feedback).toMatchObject({ score: -1, signal: "rephrase" });
    const score = await post(`/v1/reasoning/calls/${id}/feedback`, { score: 1, comment: "ok" });
    expect(score.body.feedback).toMatchObject({ score: 1, signal: "positive", comment: "ok" });
    const neutral = await post(`/v1/reasoning/calls/${id}/feedback`, { score: 0 });
    expect(neutral.body.feedback).toMatchObject({ score: 0, signal: null });
    expect((await post(`/v1/reasoning/calls/${id}/feedback`, {})).status).toBe(400);
    expect((await post(`/v1/reasoning/calls/${id}/feedback`, { signal: "meh" })).status).toBe(400);
  });
});

describe("performance and affinity", () => {
  // A known dataset, written as rows: prompt "perf" answered by two models.
  beforeAll(async () => {
    expect((await publish("perf", { version: "1.0.0", content: "p" })).status).toBe(201);
    const db = (await database()).read;
    const row = (
      model: string,
      status: string,
      duration: number,
      cost: number,
      tokens: number,
      signal: string | null,
    ) => ({
      id: newId("rsn"),
      orgDid: ctx.root.orgDid,
      task: "general",
      complexity: "medium",
      budgetMode: "optimize",
      model,
      provider: "fake",
      status,
      reason: "test",
      alternatives: [],
      inputTokens: tokens / 2,
      outputTokens: tokens / 2,
      costUsd: cost,
      durationMs: duration,
      requestId: "req_test",
      feedbackSignal: signal,
      promptKey: "perf",
      promptVersion: "1.0.0",
    });
    await db.reasoningCall.createMany({
      data: [
        // fast: 4 calls, all succeeded, 100 ms, $0.001, 100 tokens; 3 positive, 1 correction
        row("fast", "succeeded", 100, 0.001, 100, "positive"),
        row("fast", "succeeded", 100, 0.001, 100, "positive"),
        row("fast", "succeeded", 100, 0.001, 100, "positive"),
        row("fast", "succeeded", 100, 0.001, 100, "correction"),
        // slow: 2 calls, one failed, 400 ms, $0.004, 300 tokens; 1 negative, 1 rephrase
        row("slow", "succeeded", 400, 0.004, 300, "negative"),
        row("slow", "failed", 400, 0.004, 300, "rephrase"),
        // pending and other prompts' calls do not count
        { ...row("fast", "pending", 100, 0, 0, null), durationMs: null },
        { ...row("fast", "succeeded", 100, 0, 0, null), promptKey: null },
        { ...row("fast", "succeeded", 100, 0, 0, null), createdAt: new Date(Date.now() - 40 * 86_400_000) },
      ],
    });
  });

  it("reports the prompt's totals, signals and per-model breakdown", async () => {
    const res = await get("/v1/prompts/perf/performance");
    expect(res.status).toBe(200);
    expect(res.body.stats).toEqual({
      total_calls: 6,
      avg_tokens: 167, // (4×100 + 2×300) / 6
      avg_cost_usd: 0.002, // (4×0.001 + 2×0.004) / 6
      avg_duration_ms: 200, // (4×100 + 2×400) / 6
      positive_signals: 3,
      negative_signals: 1,
      rephrases: 1,
      corrections: 1,
    });
    expect(res.body.model_breakdown).toEqual([
      {
        model_id: "fast",
        provider: "fake",
        call_count: 4,
        avg_latency_ms: 100,
        avg_cost_usd: 0.001,
        avg_tokens: 100,
        success_rate: 1,
      },
      {
        model_id: "slow",
        provider: "fake",
        call_count: 2,
        avg_latency_ms: 400,
        avg_cost_usd: 0.004,
        avg_tokens: 300,
        success_rate: 0.5,
      },
    ]);
    expect(res.body.recommended_model).toBeNull();
    expect((await get("/v1/prompts/perf/performance?window_days=0")).status).toBe(400);
  });

  it("scores prompt × model affinity by the documented formula", async () => {
    const res = await get("/v1/prompts/affinity?prompt_key=perf");
    expect(res.status).toBe(200);
    // fast: raw = 0.4×1 + 0.3×(4/6) + 0.15×1 + 0.15×1 = 0.9; 0.5 + 0.4 × 4/24
    // slow: raw = 0.4×0.5 + 0.3×(1/4) + 0.15×0.25 + 0.15×0.25 = 0.35; 0.5 − 0.15 × 2/22
    expect(
      res.body.data.map((d: { model_id: string; sample_size: number; affinity_score: number }) => [
        d.model_id,
        d.sample_size,
        d.affinity_score,
      ]),
    ).toEqual([
      ["fast", 4, Math.round((0.5 + 0.4 * (4 / 24)) * 10_000) / 10_000],
      ["slow", 2, Math.round((0.5 - 0.15 * (2 / 22)) * 10_000) / 10_000],
    ]);
    expect(res.body.data[1].stats).toEqual({
      avg_latency_ms: 400,
      avg_cost_usd: 0.004,
      avg_tokens: 300,
      success_rate: 0.5,
    });
    const page = await get("/v1/prompts/affinity?prompt_key=perf&limit=1");
    expect(page.body.data[0].model_id).toBe("fast");
    const next = await get(`/v1/prompts/affinity?prompt_key=perf&limit=1&cursor=${page.body.pagination.next_cursor}`);
    expect(next.body.data.map((d: { model_id: string }) => d.model_id)).toEqual(["slow"]);
    expect(next.body.pagination).toEqual({ has_more: false, next_cursor: null });
    expect((await get("/v1/prompts/affinity?prompt_key=perf&min_sample=3")).body.data).toHaveLength(1);
  });

  it("is the service the learning worker calls", async () => {
    const db = (await database()).read;
    const report = await computePromptAffinity(db, ctx.root.orgDid, {
      engine: (await database()).engine,
      promptKey: "perf",
    });
    expect(report[0]).toMatchObject({ prompt_key: "perf", model_id: "fast", signals: { positive: 3, corrections: 1 } });
  });
});
