import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { ValidationFailed } from "../errors";
import { ListQuery, PaginationInfo } from "./listSchemas";

/**
 * Opaque, tamper-evident pagination cursors: base64url(JSON position) + "." + HMAC-SHA256 over it
 * and the list it belongs to, keyed by the service secret. A cursor of one list is refused by
 * another; an edited cursor is refused everywhere. Keyset pagination, so no OFFSET scans.
 */
export type CursorPosition = (string | number)[];

const invalidCursor = () =>
  ValidationFailed(
    [
      {
        field: "cursor",
        code: "INVALID_CURSOR",
        message: "The cursor is not one this list issued. Start again without a cursor.",
      },
    ],
    "The cursor is not valid.",
  );

function mac(secret: Buffer, list: string, payload: string): string {
  return createHmac("sha256", secret).update(list).update("\n").update(payload).digest("base64url").slice(0, 22);
}

export function encodeCursor(secret: Buffer, list: string, position: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify(position)).toString("base64url");
  return `${payload}.${mac(secret, list, payload)}`;
}

export function decodeCursor(secret: Buffer, list: string, cursor: string): CursorPosition {
  const [payload, tag, extra] = cursor.split(".");
  if (!payload || !tag || extra !== undefined) throw invalidCursor();
  const expected = Buffer.from(mac(secret, list, payload));
  const given = Buffer.from(tag);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalidCursor();
  try {
    const position = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    if (Array.isArray(position) && position.every((p) => typeof p === "string" || typeof p === "number"))
      return position;
  } catch {
    // fall through
  }
  throw invalidCursor();
}

// The list schemas live in a pure module (area schemas import them); re-exported for the services.
export { ListQuery, PaginationInfo };

export type Page<T> = { items: T[]; pagination: z.infer<typeof PaginationInfo> };

/**
 * Keyset pagination, written once for every list:
 *
 *     const { after, take, page } = keyset<Revocation>(secret, "revocations", query, (last) => [last.id]);
 *     const rows = await db.revocation.findMany({ where: { orgDid, ...(after ? { id: { lt: after[0] as string } } : {}) }, orderBy: { id: "desc" }, take });
 *     const { items, pagination } = page(rows);
 *
 * `after` is the decoded position of the last row the caller saw (undefined on the first page);
 * the list's query returns rows strictly after it in the list's order, `take` of them (one more
 * than the page, so `has_more` costs no COUNT(*)); `page` cuts the extra row off and encodes the
 * position `key` gives for the page's last row as the next cursor. The query stays in the service,
 * beside its filters; only the cursor's mechanics live here.
 */
export function keyset<T>(
  secret: Buffer,
  list: string,
  query: { limit: number; cursor?: string },
  key: (row: T) => CursorPosition,
): { after: CursorPosition | undefined; take: number; page(rows: T[]): Page<T> } {
  return {
    after: query.cursor ? decodeCursor(secret, list, query.cursor) : undefined,
    take: query.limit + 1,
    page: (rows) => page(rows, query.limit, (last) => encodeCursor(secret, list, key(last))),
  };
}

/** A page of `limit` items from `rows` fetched with `limit + 1`. */
function page<T>(rows: T[], limit: number, next: (last: T) => string): Page<T> {
  const has_more = rows.length > limit;
  const items = has_more ? rows.slice(0, limit) : rows;
  return { items, pagination: { has_more, next_cursor: has_more ? next(items[items.length - 1]!) : null } };
}

/**
 * The where-clause of a "newest first" page (ordered by `time` desc, then `tie` desc): the rows
 * strictly after `after` = [ISO time, tie-breaker] in that order; nothing on the first page.
 *
 *     where: { orgDid, ...olderThan(after, "createdAt", "id") },
 *     orderBy: [{ createdAt: "desc" }, { id: "desc" }],
 */
export function olderThan<T extends string, K extends string>(
  after: CursorPosition | undefined,
  time: T,
  tie: K,
): { OR?: Array<Record<T, { lt: Date }> | (Record<T, Date> & Record<K, { lt: string }>)> } {
  if (!after) return {};
  const at = new Date(after[0] as string);
  return {
    OR: [
      { [time]: { lt: at } } as Record<T, { lt: Date }>,
      { [time]: at, [tie]: { lt: after[1] as string } } as Record<T, Date> & Record<K, { lt: string }>,
    ],
  };
}
