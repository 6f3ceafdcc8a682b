#!/usr/bin/env node
// DEMO ONLY — not part of svc, never used by the product. A tiny OpenAI-compatible model provider on
// loopback, so svc's reasoning (routing, budgets, prompts, learning) can be tried on a laptop with
// no internet and no API key. Its "models" answer with canned text; token counts are
// deterministic (about 4 bytes a token). svc talks to it exactly as to OpenAI or Ollama.
//
//   node examples/demo/model-provider.mjs [port]        (default 11435; listens on 127.0.0.1 only)
//
// Then start svc with it as a provider (prices make budgets and Spend work):
//   SVC_OUTBOUND_ALLOW=127.0.0.1:11435 SVC_MODEL_PROVIDERS='[{"name":"demo","kind":"openai-compatible",
//     "base_url":"http://127.0.0.1:11435/v1","models":[
//       {"model_id":"local-small","input_cost_per_million":0.1,"output_cost_per_million":0.2},
//       {"model_id":"local-large","input_cost_per_million":2,"output_cost_per_million":6}]}]' npm start
import { createServer } from "node:http";

const port = Number(process.argv[2] || process.env.DEMO_MODEL_PORT || 11435);
const MODELS = ["local-small", "local-large"];
const tokens = (text) => Math.max(1, Math.ceil(Buffer.byteLength(text, "utf8") / 4));

const server = createServer(async (req, res) => {
  const json = (status, value) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
  if (req.method === "GET" && req.url === "/v1/models")
    return json(200, { object: "list", data: MODELS.map((id) => ({ id, object: "model", owned_by: "demo" })) });
  if (req.method !== "POST" || req.url !== "/v1/chat/completions")
    return json(404, { error: { message: `the demo provider answers GET /v1/models and POST /v1/chat/completions` } });
  let raw = "";
  for await (const chunk of req) raw += chunk;
  let chat;
  try {
    chat = JSON.parse(raw);
  } catch {
    return json(400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
  }
  if (!MODELS.includes(chat.model))
    return json(404, { error: { message: `no model ${chat.model}`, type: "invalid_request_error" } });
  const messages = Array.isArray(chat.messages) ? chat.messages : [];
  const last = [...messages].reverse().find((m) => m.role === "user") ?? messages.at(-1);
  const asked = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  const text = `(${chat.model}, a demo model) You said: ${asked.slice(0, 200)}`;
  const promptTokens = messages.reduce((n, m) => n + tokens(String(m.content ?? "")) + 4, 0);
  const completionTokens = Math.min(tokens(text), chat.max_tokens ?? Infinity);
  json(200, {
    id: `chatcmpl-demo-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: chat.model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  });
});
server.listen(port, "127.0.0.1", () =>
  console.log(`demo model provider on http://127.0.0.1:${port}/v1 (${MODELS.join(", ")})`),
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
