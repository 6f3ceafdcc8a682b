import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fake OpenAI-compatible model server on loopback: the test peer of the reasoning area (the
 * product always talks to real providers through the AI SDK). It answers `GET /v1/models` and
 * `POST /v1/chat/completions` like OpenAI does, counts tokens deterministically (input: the
 * whitespace-separated words of every message plus 3 per message; output: `reply` words, at most
 * max_tokens), and on demand per model answers an error, a rate limit (429) or never (a timeout).
 * It records every chat request so tests can check what was passed through.
 */
export type Behaviour = "ok" | "error" | "rate_limit" | "timeout";

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
}

export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`, the provider's base_url. */
  baseUrl: string;
  hostPort: string;
  requests: ChatRequest[];
  behave(model: string, behaviour: Behaviour): void;
  /** How many words the answer has (default 5). */
  setReplyWords(n: number): void;
  /** Milliseconds to wait before answering (default 0). */
  setDelayMs(ms: number): void;
  /** Usage to report instead of the counted one (a lying or broken provider); undefined: counted. */
  setReportedUsage(usage: { prompt_tokens: number; completion_tokens: number } | undefined): void;
  close(): Promise<void>;
}

export const wordsOf = (s: string) => s.split(/\s+/).filter(Boolean).length;
export const inputTokensOf = (messages: { content: string }[]) =>
  messages.reduce((n, m) => n + wordsOf(m.content) + 3, 0);

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startFakeOpenAI(models: string[], opts: { port?: number } = {}): Promise<FakeOpenAI> {
  const behaviours = new Map<string, Behaviour>();
  const requests: ChatRequest[] = [];
  let replyWords = 5;
  let delayMs = 0;
  let reportedUsage: { prompt_tokens: number; completion_tokens: number } | undefined;
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.method === "GET" && req.url === "/v1/models")
        return json(200, { object: "list", data: models.map((id) => ({ id, object: "model", owned_by: "fake" })) });
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") return json(404, { error: { message: "no" } });
      const chat = JSON.parse(await body(req)) as ChatRequest;
      requests.push(chat);
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const behaviour = behaviours.get(chat.model) ?? "ok";
      if (behaviour === "timeout") {
        // Never answers; the socket is closed when the client gives up or the peer closes.
        await new Promise<void>((resolve) => {
          hanging.add(resolve);
          req.socket.once("close", resolve);
        });
        return;
      }
      if (behaviour === "error") return json(500, { error: { message: "the fake model broke", type: "server_error" } });
      if (behaviour === "rate_limit")
        return json(429, { error: { message: "slow down", type: "rate_limit_exceeded" } });
      const prompt = inputTokensOf(chat.messages);
      const completion = Math.min(replyWords, chat.max_tokens ?? replyWords);
      const text = Array.from({ length: completion }, (_, i) => `w${i}`).join(" ");
      return json(200, {
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: chat.model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: reportedUsage
          ? { ...reportedUsage, total_tokens: reportedUsage.prompt_tokens + reportedUsage.completion_tokens }
          : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    hostPort: `127.0.0.1:${port}`,
    requests,
    behave: (model, b) => void behaviours.set(model, b),
    setReplyWords: (n) => void (replyWords = n),
    setDelayMs: (ms) => void (delayMs = ms),
    setReportedUsage: (u) => void (reportedUsage = u),
    close: () =>
      new Promise((resolve) => {
        for (const release of hanging) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
