import { createHash } from "node:crypto";
import { call } from "./harness";

/** The deploy body's bundle fields for `code`: base64 and its sha256: hash. */
export function bundleOf(code: string): { bundleBase64: string; bundleHash: string } {
  const bytes = Buffer.from(code, "utf8");
  return {
    bundleBase64: bytes.toString("base64"),
    bundleHash: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
  };
}

export function manifestOf(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    version: "1.0.0",
    description: `test agent ${name}`,
    capabilities: [{ id: "svc_api:agents:read", evidence: ["reads agents"] }],
    ...extra,
  };
}

/** Deploys `code` as `name` and waits for the outcome (201). */
export async function deployAndWait(
  base: string,
  token: string,
  name: string,
  code: string,
  manifest: Record<string, unknown> = {},
) {
  const res = await call(base, "POST", "/v1/agents/deploy", {
    token,
    body: { manifest: manifestOf(name, manifest), ...bundleOf(code), wait: true },
  });
  if (res.status !== 201) throw new Error(`deploy of ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.agentId as string;
}
