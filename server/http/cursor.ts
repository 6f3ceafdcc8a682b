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
  ValidationFailed([{ field: "cursor", code: "INVALID_CURSOR", message: "The cursor is not one this list issued. Start again without a cursor." }], "The cursor is not valid.");

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
    if (Array.isArray(position) && position.every((p) => typeof p === "string" || typeof p === "number")) return position;
  } catch {
    // fall through
  }
  throw invalidCursor();
}

// The list schemas live in a pure module (area schemas import them); re-exported for the services.
export { ListQuery, PaginationInfo };

/** A page of `limit` items from `rows` fetched with `limit + 1`. */
export function page<T>(rows: T[], limit: number, next: (last: T) => string): { items: T[]; pagination: z.infer<typeof PaginationInfo> } {
  const has_more = rows.length > limit;
  const items = has_more ? rows.slice(0, limit) : rows;
  return { items, pagination: { has_more, next_cursor: has_more ? next(items[items.length - 1]!) : null } };
}
