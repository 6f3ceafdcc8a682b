/** One changed leaf between two JSON values: its path, and the value before and/or after. */
export interface JsonChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * What an approver changed in a request's parameters, leaf by leaf (objects are walked, arrays
 * and scalars compared whole), so the inbox shows exactly what "approve with modifications" will
 * run instead of the original.
 */
export function jsonDiff(before: unknown, after: unknown, path = "$"): JsonChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => {
      const p = `${path}.${k}`;
      if (!(k in after)) return [{ path: p, before: before[k] }];
      if (!(k in before)) return [{ path: p, after: after[k] }];
      return jsonDiff(before[k], after[k], p);
    });
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, before, after }];
}
