import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { wordsOf } from "./fakeOpenAI";

/**
 * A fake Anthropic Messages endpoint on loopback (the test peer of an `anthropic` provider):
 * `GET /v1/models` and `POST /v1/messages` shaped like Anthropic's, usage counted the way
 * fakeOpenAI.ts counts (input: words + 3 per message, the system prompt included; output: 4 words,
 * at most max_tokens). It records each request with its headers, so tests can check the key and
 * version the SDK sent, and answers 401 without `x-api-key`.
 */
export interface AnthropicRequest {
  headers: Record<string, string | string[] | undefined>;
  body: {
    model: string;
    max_tokens: number;
    system?: string | { type: string; text: string }[];
    messages: { role: string; content: string | { type: string; text: string }[] }[];
    temperature?: number;
  };
}

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>/v1`, the provider's base_url. */
  baseUrl: string;
  hostPort: string;
  requests: AnthropicRequest[];
  close(): Promise<void>;
}

const textOf = (c: string | { type: string; text: string }[] | undefined) =>
  c === undefined ? "" : typeof c === "string" ? c : c.map((p) => p.text ?? "").join(" ");

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startFakeAnthropic(models: string[]): Promise<FakeAnthropic> {
  const requests: AnthropicRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (!req.headers["x-api-key"])
        return json(401, { type: "error", error: { type: "authentication_error", message: "x-api-key missing" } });
      if (req.method === "GET" && req.url?.startsWith("/v1/models"))
        return json(200, {
          data: models.map((id) => ({ id, type: "model", display_name: id, created_at: "2026-01-01T00:00:00Z" })),
          has_more: false,
          first_id: models[0] ?? null,
          last_id: models.at(-1) ?? null,
        });
      if (req.method !== "POST" || req.url !== "/v1/messages")
        return json(404, { type: "error", error: { type: "not_found_error", message: "no" } });
      const parsed = JSON.parse(await body(req)) as AnthropicRequest["body"];
      requests.push({ headers: req.headers, body: parsed });
      const system = textOf(parsed.system);
      const input =
        (system ? wordsOf(system) + 3 : 0) + parsed.messages.reduce((n, m) => n + wordsOf(textOf(m.content)) + 3, 0);
      const output = Math.min(4, parsed.max_tokens);
      return json(200, {
        id: `msg_${requests.length}`,
        type: "message",
        role: "assistant",
        model: parsed.model,
        content: [{ type: "text", text: Array.from({ length: output }, (_, i) => `a${i}`).join(" ") }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: input, output_tokens: output },
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    hostPort: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
