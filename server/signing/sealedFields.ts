import { decryptSecret, encryptSecret } from "./webhookSecrets";

/**
 * Secret fields of an answer kept at rest: an operation declares which of its answer's fields are
 * secret (`secretFields`: a bearer token, a `whsec_` secret), and where svc keeps such an answer
 * (a workflow `svc` node's output) each of those fields is replaced by a sealed marker
 * `{"$sealed": "v1.…"}`, encrypted with the service's sealing key (encryptSecret) and bound to a
 * context (the workflow), so the database and its backups never hold the value. Readers are
 * shown `REDACTED` in its place; only the run itself opens it, to hand it to the node that needs it.
 */
export const REDACTED = "[redacted]";
const MARKER = "$sealed";

type Obj = Record<string, unknown>;

const isSealed = (v: unknown): v is { [MARKER]: string } =>
  !!v &&
  typeof v === "object" &&
  !Array.isArray(v) &&
  typeof (v as Obj)[MARKER] === "string" &&
  Object.keys(v).length === 1;

/** A copy of `value` with each of `fields` (top-level) sealed; the value itself when none is present. */
export async function sealFields(value: Obj, fields: readonly string[] | undefined, context: string): Promise<Obj> {
  const present = (fields ?? []).filter((f) => Object.hasOwn(value, f) && value[f] !== null && value[f] !== undefined);
  if (present.length === 0) return value;
  const out: Obj = { ...value };
  for (const f of present) out[f] = { [MARKER]: await encryptSecret(JSON.stringify(value[f]), context) };
  return out;
}

/** Walks JSON, replacing each sealed marker with what `replace` makes of it. */
async function mapSealed(value: unknown, replace: (sealed: string) => Promise<unknown> | unknown): Promise<unknown> {
  if (isSealed(value)) return replace(value[MARKER]);
  if (Array.isArray(value)) return Promise.all(value.map((v) => mapSealed(v, replace)));
  if (value && typeof value === "object") {
    const entries = await Promise.all(
      Object.entries(value as Obj).map(async ([k, v]) => [k, await mapSealed(v, replace)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}

const containsSealed = (value: unknown): boolean =>
  isSealed(value) ||
  (Array.isArray(value)
    ? value.some(containsSealed)
    : !!value && typeof value === "object" && Object.values(value as Obj).some(containsSealed));

/**
 * The real values back, for the run that passes them on (an agent's input, a condition's data).
 * A marker that does not open in `context` (copied from elsewhere, or sealed under another service
 * secret) is shown redacted rather than trusted.
 */
export async function openSealed<T>(value: T, context: string): Promise<T> {
  if (!containsSealed(value)) return value;
  return (await mapSealed(value, async (sealed) => {
    try {
      return JSON.parse(await decryptSecret(sealed, context)) as unknown;
    } catch {
      return REDACTED;
    }
  })) as T;
}

/** What a reader sees: every sealed marker, however deep (a join copies its branches' outputs), as `REDACTED`. */
export function redactSealed<T>(value: T): T {
  if (!containsSealed(value)) return value;
  const walk = (v: unknown): unknown => {
    if (isSealed(v)) return REDACTED;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v as Obj).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
