import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { followConnections, type FollowedServer } from "./followConnections";

/**
 * A graceful stop behind a keep-alive proxy (nginx's upstream `keepalive`): the request a proxy
 * writes on a pooled connection at the moment the stop begins must be answered, never reset (nginx
 * answers such a POST 502 and does not resend it). Real HTTP on loopback, with raw sockets so the
 * test decides exactly when each byte is written: a request written and the stop begun in the same
 * tick reaches the server after the stop, the ordering that the race needs, every time.
 */
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.closeAllConnections();
});

async function start(): Promise<{ followed: FollowedServer; port: number; release: () => void; held: Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let heard!: () => void;
  const held = new Promise<void>((r) => (heard = r));
  const server = createServer((req, res) => {
    // `/hold` waits for the test to release it: a request in flight while the stop begins.
    if (req.url === "/hold") {
      heard();
      void gate.then(() => res.end("held"));
    } else res.end("ok");
  });
  servers.push(server);
  const followed = followConnections(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { followed, port: (server.address() as AddressInfo).port, release, held };
}

/** A raw HTTP/1.1 connection that reads one answer at a time. */
async function open(port: number) {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let buffer = "";
  let ended = false;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => ((buffer += d), wake()));
  socket.on("error", () => undefined);
  socket.on("close", () => ((ended = true), wake()));
  return {
    socket,
    write: (path: string) => socket.write(`POST ${path} HTTP/1.1\r\nHost: svc\r\nContent-Length: 2\r\n\r\n{}`),
    /** The next answer's status line and headers, or "closed" if the connection closed first. */
    async answer(): Promise<{ status: number; connection: string | undefined } | "closed"> {
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end >= 0) {
          const head = buffer.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length >= end + 4 + length) {
            buffer = buffer.slice(end + 4 + length);
            return {
              status: Number(head.split(" ")[1]),
              connection: /^connection: (.*)$/im.exec(head)?.[1]?.toLowerCase(),
            };
          }
        }
        if (ended) return "closed";
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    closed: () => new Promise<void>((r) => (ended ? r() : socket.once("close", () => r()))),
  };
}

const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve("accepted")));
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
  });

describe("followConnections: stopping behind a keep-alive proxy", () => {
  it("answers a request written on an idle keep-alive connection as the stop begins, then closes it", async () => {
    const { followed, port } = await start();
    const c = await open(port);
    c.write("/first");
    expect(await c.answer()).toEqual({ status: 200, connection: "keep-alive" });
    // Idle now, as in a proxy's pool: the proxy reuses it just as the process begins to stop.
    c.write("/second");
    const stopped = followed.stop(60_000);
    expect(await c.answer(), "answered, not reset").toEqual({ status: 200, connection: "close" });
    await c.closed();
    await stopped;
  });

  it("answers a request on a connection accepted just before the stop that had sent nothing yet", async () => {
    const { followed, port } = await start();
    const accepted = new Promise<void>((r) => followed.server.once("connection", () => r()));
    const c = await open(port);
    await accepted;
    c.write("/first");
    const stopped = followed.stop(60_000);
    expect(await c.answer()).toEqual({ status: 200, connection: "close" });
    await stopped;
  });

  it("refuses new connections, keeps an idle one open for its client within the grace, and answers on it", async () => {
    const { followed, port } = await start();
    const c = await open(port);
    c.write("/first");
    expect(await c.answer()).toEqual({ status: 200, connection: "keep-alive" });
    let done = false;
    const stopped = followed.stop(60_000).then(() => (done = true));
    expect(await refused(port)).toBe("ECONNREFUSED");
    // The idle connection was not closed under its client: a request on it now is still answered.
    c.write("/later");
    expect(await c.answer()).toEqual({ status: 200, connection: "close" });
    await c.closed();
    await stopped;
    expect(done).toBe(true);
  });

  it("closes a connection idle past the grace itself, and finishes the request in flight first", async () => {
    const { followed, port, release, held } = await start();
    const idle = await open(port);
    idle.write("/first");
    expect(await idle.answer()).toEqual({ status: 200, connection: "keep-alive" });
    const busy = await open(port);
    busy.write("/hold");
    await held;
    let done = false;
    const stopped = followed.stop(0).then(() => (done = true));
    // A grace of 0: the idle connection is closed at once, the busy one is not.
    await idle.closed();
    expect(done).toBe(false);
    release();
    expect(await busy.answer()).toEqual({ status: 200, connection: "close" });
    await busy.closed();
    await stopped;
  });
});
