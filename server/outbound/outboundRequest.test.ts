import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "../config";
import { parseOutboundAllow } from "./allowList";
import { assertOutboundUrl } from "./assertOutboundUrl";
import { guardedFetch } from "./guardedFetch";
import { agentFor, outboundRequest } from "./outboundRequest";

/**
 * Only loopback receivers are ever called. Every refused destination is called with a 300 ms
 * limit and must fail with `outbound_refused`: had the guard let a connection start, the call
 * would end in `outbound_timeout` (or `outbound_failed`) instead, so a regression cannot pass.
 */
interface Receiver {
  server: http.Server;
  port: number;
  hits: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
}

async function receiver(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, r: Receiver) => void,
): Promise<Receiver> {
  const r = { hits: [] } as unknown as Receiver;
  r.server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      r.hits.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handle(req, res, r);
    });
  });
  await new Promise<void>((done) => r.server.listen(0, "127.0.0.1", done));
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

let main: Receiver;
let other: Receiver;
let third: Receiver;

function allow(value: string) {
  process.env.SVC_OUTBOUND_ALLOW = value;
  resetConfig();
}

async function failure(promise: Promise<unknown>): Promise<{ code?: string; message: string; elapsed: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message, elapsed: Date.now() - started };
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  other = await receiver((_req, res) => res.end("SHOULD NOT BE REACHED"));
  third = await receiver((_req, res) => res.end("third"));
  main = await receiver((req, res) => {
    const path = req.url ?? "/";
    if (path === "/to-other") return res.writeHead(302, { location: `http://127.0.0.1:${other.port}/x` }).end();
    if (path === "/to-metadata")
      return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (path === "/to-third") return res.writeHead(307, { location: `http://127.0.0.1:${third.port}/y` }).end();
    if (path === "/same-307") return res.writeHead(307, { location: "/echo" }).end();
    if (path === "/same-303") return res.writeHead(303, { location: "/echo" }).end();
    if (path === "/loop") return res.writeHead(302, { location: "/loop" }).end();
    if (path === "/hang") return; // never answers
    if (path === "/slow-body") {
      res.writeHead(200);
      res.write("start");
      return; // never ends
    }
    if (path === "/big") return res.end(Buffer.alloc(100_000, 97));
    if (path === "/json")
      return res
        .writeHead(201, { "content-type": "application/json", "x-test": "yes" })
        .end(JSON.stringify({ ok: true }));
    res.end(`${req.method} ${path} ${main.hits.at(-1)?.body ?? ""}`);
  });
});

afterEach(() => {
  delete process.env.SVC_OUTBOUND_ALLOW;
  resetConfig();
  for (const r of [main, other, third]) r.hits.length = 0;
});

afterAll(async () => {
  for (const r of [main, other, third]) {
    r.server.closeAllConnections();
    await new Promise((done) => r.server.close(done));
  }
});

describe("outboundRequest", () => {
  it("calls a receiver listed in SVC_OUTBOUND_ALLOW", async () => {
    allow(`127.0.0.1:${main.port}`);
    const answer = await outboundRequest(`http://127.0.0.1:${main.port}/echo`, {
      method: "POST",
      body: "hello",
      headers: { "Content-Type": "text/plain" },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("POST /echo hello");
    expect(answer.truncated).toBe(false);
    expect(answer.url).toBe(`http://127.0.0.1:${main.port}/echo`);
    expect(answer.durationMs).toBeGreaterThanOrEqual(0);
    expect(main.hits[0]!.headers["content-type"]).toBe("text/plain");
  });

  it("refuses loopback, private, link-local, metadata and disguised addresses before connecting", async () => {
    allow(`127.0.0.1:${main.port}`);
    const refused = [
      `http://127.0.0.1:${other.port}/`,
      "http://127.0.0.1/",
      "http://10.0.0.1/",
      "https://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "https://169.254.169.254/",
      "https://[::ffff:a9fe:a9fe]/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://017700000001/",
      "http://0x7f000001/",
      "http://2130706433/",
      "http://127.1/",
      "http://[::1]/",
      `http://[::1]:${main.port}/`,
      "http://0.0.0.0/",
      "http://[::]/",
      "http://100.64.0.1/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:a9fe:a9fe::]/",
      // IPv4-compatible IPv6 (ipaddr.js calls ::/96 "unicast"), and other forms carrying 127.0.0.1
      "http://[::127.0.0.1]/",
      `http://[::127.0.0.1]:${main.port}/`,
      "http://[::7f00:1]/",
      `http://[::7f00:1]:${main.port}/`,
      "https://[::7f00:1]/",
      "http://[::ffff:7f00:1]/",
      `http://[::ffff:7f00:1]:${main.port}/`,
      "http://[64:ff9b::7f00:1]/",
      "http://[64:ff9b:1::7f00:1]/",
      "http://[2002:7f00:1::]/",
      "http://[::a00:1]/",
      "http://[4000::1]/",
      "http://localhost/",
      `http://localhost:${main.port}/`,
      `http://localhost:${other.port}/`,
    ];
    // Refused before connecting, not after a timeout: the timeout is long (5 s) so that a refusal's few
    // milliseconds, even stretched by a loaded machine, cannot be mistaken for it.
    for (const url of refused) {
      const f = await failure(outboundRequest(url, { timeoutMs: 5_000 }));
      expect({ url, code: f.code }).toEqual({ url, code: "outbound_refused" });
      expect(f.elapsed).toBeLessThan(1_000);
    }
    expect(other.hits).toHaveLength(0);
    expect(main.hits).toHaveLength(0);
  });

  it("has the agent itself refuse, after DNS for names, when the URL checks are bypassed", async () => {
    allow(`127.0.0.1:${main.port}`);
    for (const target of [
      "http://10.0.0.1/",
      "https://10.0.0.1/",
      "http://169.254.169.254/",
      "https://[fd00::1]/",
      "http://[::ffff:a9fe:a9fe]/",
      `http://127.0.0.1:${other.port}/`,
      `http://localhost:${other.port}/`,
      `http://[::7f00:1]:${main.port}/`,
      `https://[::7f00:1]:${main.port}/`,
      "http://[::a9fe:a9fe]/",
    ]) {
      const url = new URL(target);
      const outcome = await new Promise<string>((resolve) => {
        const req = (url.protocol === "https:" ? https : http).request(
          url,
          { agent: agentFor(url), timeout: 300 },
          () => resolve("connected"),
        );
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("error", (e) => resolve(e.message));
        req.end();
      });
      expect(outcome, target).toMatch(/is not allowed/);
    }
    expect(other.hits).toHaveLength(0);
  });

  it("classifies the addresses a name resolves to at connect time with the same ranges (IPv4-compatible IPv6 included)", async () => {
    allow(`127.0.0.1:${main.port}`);
    const { addressRefusal } = await import("./allowList");
    for (const [ip, carried] of [
      ["::7f00:1", "127.0.0.1"],
      ["::ffff:7f00:1", "127.0.0.1"],
      ["64:ff9b::a9fe:a9fe", "169.254.169.254"],
      ["2002:a00:1::", "10.0.0.1"],
    ] as const) {
      expect(addressRefusal(ip), ip).toContain(carried);
    }
    expect(addressRefusal("2606:4700:4700::1111")).toBeUndefined();
    expect(addressRefusal("93.184.216.34")).toBeUndefined();
    // A name whose DNS answer is an IPv4-compatible loopback: the socket is never opened.
    const url = new URL(`http://svc-test.invalid:${main.port}/`);
    const lookup = (_host: string, options: { all?: boolean }, cb: (e: null, a: unknown, f?: number) => void) =>
      options.all ? cb(null, [{ address: "::7f00:1", family: 6 }]) : cb(null, "::7f00:1", 6);
    const outcome = await new Promise<string>((resolve) => {
      const req = http.request(url, { agent: agentFor(url), timeout: 300, lookup } as http.RequestOptions, () =>
        resolve("connected"),
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (e) => resolve(e.message));
      req.end();
    });
    expect(outcome).toMatch(/::7f00:1.*is not allowed.*127\.0\.0\.1/);
    expect(main.hits).toHaveLength(0);
  });

  it("refuses a redirect from the allowed receiver to an address that is not allowed", async () => {
    allow(`127.0.0.1:${main.port}`);
    for (const path of ["/to-other", "/to-metadata"]) {
      const f = await failure(outboundRequest(`http://127.0.0.1:${main.port}${path}`, { timeoutMs: 300 }));
      expect(f.code).toBe("outbound_refused");
    }
    expect(other.hits).toHaveLength(0);
  });

  it("follows same-origin redirects: 307 keeps the method and body, 303 becomes a GET", async () => {
    allow(`127.0.0.1:${main.port}`);
    const kept = await outboundRequest(`http://127.0.0.1:${main.port}/same-307`, { method: "POST", body: "payload" });
    expect(kept.status).toBe(200);
    expect(kept.body.toString()).toBe("POST /echo payload");
    expect(kept.redirects).toBe(1);
    expect(kept.url).toBe(`http://127.0.0.1:${main.port}/echo`);
    const seeOther = await outboundRequest(`http://127.0.0.1:${main.port}/same-303`, {
      method: "POST",
      body: "payload",
    });
    expect(seeOther.body.toString()).toBe("GET /echo ");
  });

  it("drops credentials on a redirect to another allowed origin", async () => {
    allow(`127.0.0.1:${main.port},127.0.0.1:${third.port}`);
    const answer = await outboundRequest(`http://127.0.0.1:${main.port}/to-third`, {
      method: "POST",
      body: "x",
      headers: { authorization: "Bearer secret", "x-keep": "1" },
    });
    expect(answer.body.toString()).toBe("third");
    expect(main.hits[0]!.headers.authorization).toBe("Bearer secret");
    expect(third.hits[0]!.headers.authorization).toBeUndefined();
    expect(third.hits[0]!.headers["x-keep"]).toBe("1");
  });

  it("stops after maxRedirects, and returns a 3xx as is with redirect: manual", async () => {
    allow(`127.0.0.1:${main.port}`);
    const f = await failure(outboundRequest(`http://127.0.0.1:${main.port}/loop`, { maxRedirects: 3 }));
    expect(f.code).toBe("outbound_refused");
    expect(f.message).toMatch(/More than 3 redirects/);
    expect(main.hits).toHaveLength(4);
    const manual = await outboundRequest(`http://127.0.0.1:${main.port}/to-other`, { redirect: "manual" });
    expect(manual.status).toBe(302);
    expect(other.hits).toHaveLength(0);
  });

  it("gives up on a receiver that hangs, before the headers or in the body, with outbound_timeout", async () => {
    allow(`127.0.0.1:${main.port}`);
    for (const path of ["/hang", "/slow-body"]) {
      const f = await failure(outboundRequest(`http://127.0.0.1:${main.port}${path}`, { timeoutMs: 300 }));
      expect(f.code).toBe("outbound_timeout");
      expect(f.elapsed).toBeGreaterThanOrEqual(250);
      expect(f.elapsed).toBeLessThan(2000);
    }
  });

  it("cuts the answer at maxBytes and says so", async () => {
    allow(`127.0.0.1:${main.port}`);
    const capped = await outboundRequest(`http://127.0.0.1:${main.port}/big`, { maxBytes: 1000 });
    expect(capped.truncated).toBe(true);
    expect(capped.body.length).toBe(1000);
    const whole = await outboundRequest(`http://127.0.0.1:${main.port}/big`, { maxBytes: 100_000 });
    expect(whole.truncated).toBe(false);
    expect(whole.body.length).toBe(100_000);
  });

  it("refuses other schemes, credentials in the URL, and plain http when https is required", async () => {
    allow(`127.0.0.1:${main.port}`);
    for (const url of [
      "file:///etc/passwd",
      "ftp://127.0.0.1/",
      `http://user:pass@127.0.0.1:${main.port}/`,
      "not a url",
    ]) {
      expect((await failure(outboundRequest(url, { timeoutMs: 300 }))).code).toBe("outbound_refused");
    }
    // refused before any DNS lookup or connection
    const f = await failure(outboundRequest("http://example.com/hook", { requireHttps: true, timeoutMs: 300 }));
    expect(f.code).toBe("outbound_refused");
    expect(f.message).toMatch(/must use https/);
    // an allow-listed host may use http even then
    expect((await outboundRequest(`http://127.0.0.1:${main.port}/echo`, { requireHttps: true })).status).toBe(200);
    expect(main.hits).toHaveLength(1);
  });

  it("opens every port of a CIDR entry, and localhost:port entries for that name", async () => {
    allow("127.0.0.0/8");
    expect((await outboundRequest(`http://127.0.0.1:${other.port}/`)).status).toBe(200);
    expect(
      (await outboundRequest(`http://127.0.0.2:${main.port}/echo`, { timeoutMs: 2000 }).catch((e) => e)).code,
    ).not.toBe("outbound_refused");
    allow(`localhost:${main.port}`);
    expect((await outboundRequest(`http://localhost:${main.port}/echo`)).status).toBe(200);
    expect((await failure(outboundRequest(`http://127.0.0.1:${main.port}/echo`, { timeoutMs: 300 }))).code).toBe(
      "outbound_refused",
    );
  });

  it("checks TLS certificates: a self-signed receiver fails even when allow-listed", async () => {
    // A committed self-signed certificate for 127.0.0.1 (testdata/, valid for a century): no openssl needed.
    const fixture = (name: string) => readFileSync(join(__dirname, "testdata", name));
    const server = https.createServer(
      { key: fixture("selfsigned-key.pem"), cert: fixture("selfsigned-cert.pem") },
      (_req, res) => res.end("tls"),
    );
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const port = (server.address() as AddressInfo).port;
      allow(`127.0.0.1:${port}`);
      const f = await failure(outboundRequest(`https://127.0.0.1:${port}/`, { requireHttps: true, timeoutMs: 2000 }));
      expect(f.code).toBe("outbound_failed");
      expect(f.message).toMatch(/certificate/i);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it("sends once more on a fresh connection when a kept-alive one turns out closed", async () => {
    // A peer that answers the first request of each connection and resets the connection on the
    // second: what a receiver closing idle keep-alive connections looks like to the pool.
    let requests = 0;
    const sockets = new Set<net.Socket>();
    const peer = net.createServer((socket) => {
      sockets.add(socket);
      let onThisSocket = 0;
      socket.on("data", () => {
        requests++;
        if (++onThisSocket > 1) return void socket.resetAndDestroy();
        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok");
      });
    });
    await new Promise<void>((done) => peer.listen(0, "127.0.0.1", done));
    try {
      const port = (peer.address() as AddressInfo).port;
      allow(`127.0.0.1:${port}`);
      expect((await outboundRequest(`http://127.0.0.1:${port}/a`, { method: "POST", body: "{}" })).status).toBe(200);
      const again = await outboundRequest(`http://127.0.0.1:${port}/b`, {
        method: "POST",
        body: "{}",
        timeoutMs: 2000,
      });
      expect(again.status).toBe(200);
      expect(requests).toBe(3); // the first, the reset one, the one sent again
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => peer.close(done));
    }
  });

  it("passes an abort signal through", async () => {
    allow(`127.0.0.1:${main.port}`);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 50);
    const f = await failure(
      outboundRequest(`http://127.0.0.1:${main.port}/hang`, { signal: controller.signal, timeoutMs: 5000 }),
    );
    expect(f.message).toBe("stop");
    expect(f.elapsed).toBeLessThan(2_500); // the abort (at 50 ms), far before the 5 s timeout
  });
});

describe("SVC_OUTBOUND_ALLOW", () => {
  it("parses host:port and CIDR entries and rejects anything else", () => {
    const parsed = parseOutboundAllow(" 127.0.0.1:8080, localhost:9000 ,[::1]:7000,10.1.0.0/16,fd00::/8");
    expect(parsed.hostPorts).toEqual([
      { host: "127.0.0.1", port: 8080, ips: ["127.0.0.1"] },
      { host: "localhost", port: 9000, ips: ["127.0.0.1", "::1"] },
      { host: "::1", port: 7000, ips: ["::1"] },
    ]);
    expect(parsed.cidrs.map((c) => c.text)).toEqual(["10.1.0.0/16", "fd00::/8"]);
    expect(parseOutboundAllow("")).toEqual({ cidrs: [], hostPorts: [] });
    for (const bad of ["example.com:80", "127.0.0.1", "127.0.0.1:0", "10.0.0.0/33", "127.0.0.1:99999"]) {
      expect(() => parseOutboundAllow(bad), bad).toThrow(/SVC_OUTBOUND_ALLOW/);
    }
  });
});

describe("assertOutboundUrl", () => {
  it("accepts public https URLs and allow-listed http ones", () => {
    expect(assertOutboundUrl("https://hooks.example.com/in", { requireHttps: true }).host).toBe("hooks.example.com");
    allow(`127.0.0.1:${main.port}`);
    expect(assertOutboundUrl(`http://127.0.0.1:${main.port}/cb`, { requireHttps: true }).port).toBe(String(main.port));
  });

  it("answers 400 with a field error for what the guard would refuse", () => {
    const cases: [string, { requireHttps?: boolean }, string][] = [
      ["not a url", {}, "INVALID_FORMAT"],
      ["ftp://example.com/", {}, "INVALID_FORMAT"],
      ["https://user:secret@example.com/", {}, "INVALID_FORMAT"],
      ["http://example.com/", { requireHttps: true }, "INVALID_VALUE"],
      ["http://127.0.0.1/", {}, "INVALID_VALUE"],
      ["http://10.0.0.1/", {}, "INVALID_VALUE"],
      ["https://169.254.169.254/", {}, "INVALID_VALUE"],
      ["http://[::ffff:a9fe:a9fe]/", {}, "INVALID_VALUE"],
      ["http://017700000001/", {}, "INVALID_VALUE"],
      ["https://localhost/", {}, "INVALID_VALUE"],
      ["https://[::127.0.0.1]/hook", {}, "INVALID_VALUE"],
      ["https://[::7f00:1]/hook", {}, "INVALID_VALUE"],
      ["https://[::ffff:7f00:1]/hook", {}, "INVALID_VALUE"],
      ["https://[64:ff9b::7f00:1]/hook", {}, "INVALID_VALUE"],
      ["https://[2002:7f00:1::]/hook", {}, "INVALID_VALUE"],
    ];
    for (const [url, options, code] of cases) {
      let error:
        { status?: number; extra?: { errors?: { field: string; code: string; received?: string }[] } } | undefined;
      try {
        assertOutboundUrl(url, { ...options, field: "target_url" });
      } catch (e) {
        error = e as typeof error;
      }
      expect(error?.status, url).toBe(400);
      expect(error?.extra?.errors?.[0]).toMatchObject({ field: "target_url", code });
      expect(error?.extra?.errors?.[0]?.received ?? "").not.toContain("secret");
    }
  });
});

describe("guardedFetch", () => {
  it("answers a Web Response through the guard", async () => {
    allow(`127.0.0.1:${main.port}`);
    const response = await guardedFetch(`http://127.0.0.1:${main.port}/json`, {
      method: "POST",
      headers: { "x-sdk": "1" },
      body: new URLSearchParams({ a: "b" }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-test")).toBe("yes");
    expect(await response.json()).toEqual({ ok: true });
    expect(main.hits[0]).toMatchObject({ method: "POST", body: "a=b" });
    expect(main.hits[0]!.headers["x-sdk"]).toBe("1");
    expect(main.hits[0]!.headers["content-type"]).toMatch(/application\/x-www-form-urlencoded/);
    // A text and bytes, as SDKs send them: encoded as fetch encodes them (a text is UTF-8 and
    // text/plain unless the caller names a type; bytes go as they are, with no type of their own).
    const sent = [
      { body: '{"é":"☃"}', type: "application/json" },
      { body: "plain ☃", type: undefined },
      { body: new TextEncoder().encode("bytes ☃"), type: undefined },
      { body: new TextEncoder().encode("buffer").buffer, type: "application/octet-stream" },
    ];
    for (const { body, type } of sent) {
      main.hits.length = 0;
      const r = await guardedFetch(`http://127.0.0.1:${main.port}/json`, {
        method: "POST",
        headers: type ? { "content-type": type } : {},
        body,
      });
      expect(r.status).toBe(201);
      const expected = new Request("http://x.invalid/", {
        method: "POST",
        body,
        headers: type ? { "content-type": type } : {},
      });
      expect(main.hits[0]!.body).toBe(await expected.text());
      expect(main.hits[0]!.headers["content-type"]).toBe(expected.headers.get("content-type") ?? undefined);
    }
    const redirected = await guardedFetch(`http://127.0.0.1:${main.port}/same-303`);
    expect(redirected.redirected).toBe(true);
    expect(redirected.url).toBe(`http://127.0.0.1:${main.port}/echo`);
  });

  it("rejects refused destinations and over-long answers", async () => {
    allow(`127.0.0.1:${main.port}`);
    await expect(guardedFetch("http://10.0.0.1/")).rejects.toMatchObject({ code: "outbound_refused" });
    await expect(guardedFetch(`http://127.0.0.1:${main.port}/to-other`)).rejects.toMatchObject({
      code: "outbound_refused",
    });
    const { createGuardedFetch } = await import("./guardedFetch");
    await expect(createGuardedFetch({ maxBytes: 10 })(`http://127.0.0.1:${main.port}/big`)).rejects.toMatchObject({
      code: "outbound_failed",
    });
    expect(other.hits).toHaveLength(0);
  });
});
