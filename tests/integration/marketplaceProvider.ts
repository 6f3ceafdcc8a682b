import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProviderRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * The loopback provider API of the marketplace tests: the test peer a connector's base URL is
 * pointed at. It answers only requests carrying one of the bearer tokens it accepts (`accept`,
 * a set the test fills with the tokens its OAuth server issued), otherwise 401 like a real API.
 * Paths:
 * - `/big/{bytes}`: a JSON-looking answer of that many bytes, streamed (the 50 MB cap test);
 * - `/status/{code}`: answers with that status;
 * - `/slow/{ms}`: answers after that many milliseconds;
 * - `/health`: 200 without a token (the health check's target);
 * - anything else: echoes `{method, path, query, body}` as JSON.
 * `open: true` accepts any request (connectors without OAuth).
 */
export async function startProvider(options: { open?: boolean } = {}) {
  const accept = new Set<string>();
  const received: ProviderRequest[] = [];
  let healthStatus = 200;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://provider.invalid");
      const query: Record<string, string | string[]> = {};
      for (const key of new Set(url.searchParams.keys())) {
        const all = url.searchParams.getAll(key);
        query[key] = all.length > 1 ? all : all[0]!;
      }
      let body: unknown = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      const path = url.pathname;
      received.push({ method: req.method ?? "GET", path, query, headers: req.headers, body });
      if (path.endsWith("/health")) return res.writeHead(healthStatus).end();
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      if (!options.open && (!token || !accept.has(token))) {
        return res
          .writeHead(401, { "content-type": "application/json" })
          .end(JSON.stringify({ message: "Bad credentials" }));
      }
      const big = /\/big\/(\d+)$/.exec(path);
      if (big) {
        let left = Number(big[1]);
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const pump = () => {
          while (left > 0) {
            const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= piece.length;
            if (!res.write(piece)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("close", () => (left = 0));
        return pump();
      }
      const status = /\/status\/(\d{3})$/.exec(path);
      if (status) {
        return res
          .writeHead(Number(status[1]), { "content-type": "application/json" })
          .end(JSON.stringify({ status: Number(status[1]) }));
      }
      const slow = /\/slow\/(\d+)$/.exec(path);
      const answer = () =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ method: req.method, path, query, body }));
      if (slow) return void setTimeout(answer, Number(slow[1]));
      answer();
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    accept,
    received,
    setHealth: (status: number) => void (healthStatus = status),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
