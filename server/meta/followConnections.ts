import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/**
 * The web server's connections as a graceful stop needs them: which carry a request, and since
 * when each has been idle.
 *
 * Why not `server.close()`: since Node 19 it also closes every idle keep-alive connection at once
 * (`closeIdleConnections()`), and an idle connection is exactly the one a proxy (nginx's
 * `keepalive` pool, an HTTP client's agent) may be writing its next request on at that moment. The
 * request's bytes are in flight or unread in the socket, the close resets them, and the proxy gets
 * an error after sending: nginx answers 502 and does not resend a POST (`proxy_next_upstream`
 * resends a non-idempotent request only when told `non_idempotent`, since it cannot know whether the
 * process ran it). HTTP/1.1 has no way to tell a client "do not reuse this connection" except in an
 * answer, so only two closes are free of that race: one after an answer that said
 * `Connection: close`, and one the client makes itself when its own idle timeout ends.
 *
 * So `stop(idleGraceMs)` stops accepting (the listener closes: a new connection is refused, which
 * a proxy retries elsewhere, even a POST), answers every request from then on with
 * `Connection: close`, and closes an idle connection itself only once it has sat idle for
 * `idleGraceMs`: a proxy whose pool drops idle connections sooner than that (nginx's upstream
 * `keepalive_timeout`) has let go of it first, so the close can meet no request.
 */
export interface FollowedServer {
  readonly server: Server;
  /** Stops accepting; resolves once every connection has closed (see above). */
  stop(idleGraceMs: number): Promise<void>;
  /** Closes every connection now, requests in flight included (a drain out of time). */
  closeAll(): void;
}

interface Connection {
  /** Requests read and not yet answered (HTTP/1.1 pipelining allows more than one). */
  inFlight: Set<ServerResponse>;
  /** When its last answer ended, or when it was accepted: ms on the monotonic clock. */
  idleSince: number;
}

/** Follows `server`'s connections from now on: call it before the server listens. */
export function followConnections(server: Server): FollowedServer {
  const connections = new Map<Socket, Connection>();
  let stopping = false;

  server.on("connection", (socket: Socket) => {
    connections.set(socket, { inFlight: new Set(), idleSince: performance.now() });
    socket.once("close", () => connections.delete(socket));
  });
  // Before the application's own listener, so the header is set before any answer is written.
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    if (stopping) res.setHeader("Connection", "close");
    const connection = connections.get(req.socket);
    if (!connection) return;
    connection.inFlight.add(res);
    res.once("close", () => {
      connection.inFlight.delete(res);
      connection.idleSince = performance.now();
    });
  });

  const closeIdle = (idleGraceMs: number) => {
    const now = performance.now();
    for (const [socket, connection] of connections)
      if (connection.inFlight.size === 0 && now - connection.idleSince >= idleGraceMs) socket.destroy();
  };

  return {
    server,
    stop(idleGraceMs) {
      stopping = true;
      // Answers not begun yet close their connections too.
      for (const { inFlight } of connections.values())
        for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
      // net.Server's close (http.Server's superclass): stops accepting and keeps the connections,
      // where http.Server's own would close the idle ones at once (see above).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      closeIdle(idleGraceMs);
      const sweep = setInterval(() => closeIdle(idleGraceMs), Math.min(250, Math.max(10, idleGraceMs / 10)));
      return closed.finally(() => clearInterval(sweep));
    },
    closeAll() {
      server.closeAllConnections();
    },
  };
}
