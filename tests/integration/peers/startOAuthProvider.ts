import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { peerConnectorDefinition, startOAuthProvider } from "./oauthProvider";

/**
 * Starts the loopback OAuth peer for a manual try or the e2e journey, and writes its connector
 * definition where svc will load it:
 *
 *     OAUTH_PEER_PORT=4555 SVC_PUBLIC_URL=http://localhost:3204 \
 *       npx tsx tests/integration/peers/startOAuthProvider.ts ./data/e2e-connectors
 *     SVC_CONNECTORS_DIR=./data/e2e-connectors SVC_OUTBOUND_ALLOW=127.0.0.1:4555 npm start
 *
 * It runs until killed.
 */
const port = Number(process.env.OAUTH_PEER_PORT ?? 4555);
const publicUrl = (process.env.SVC_PUBLIC_URL ?? "http://localhost:3000").replace(/\/$/, "");
const dir = resolve(process.argv[2] ?? "./data/e2e-connectors");
const peer = await startOAuthProvider({ port, redirectUris: [`${publicUrl}/v1/marketplace/oauth/callback`] });
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "loopback-oauth.json"), JSON.stringify(peerConnectorDefinition(peer), null, 2));
console.log(
  JSON.stringify({ issuer: peer.issuer, client_id: peer.clientId, connectors_dir: dir, outbound_allow: peer.hostPort }),
);
