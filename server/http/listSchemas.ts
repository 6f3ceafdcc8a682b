import { z } from "zod";

// Plain zod, no node-only import, so area schemas (and the console forms importing them) stay pure.

/** `?limit=&cursor=` of every list. */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("Page size, 1 to 100."),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe("Opaque cursor from the previous page's `pagination.next_cursor`."),
});

export const PaginationInfo = z
  .object({
    has_more: z.boolean(),
    next_cursor: z.string().nullable().describe("Opaque; null when has_more is false."),
    total_count: z.number().int().optional(),
  })
  .meta({
    id: "PaginationInfo",
    example: {
      has_more: true,
      next_cursor:
        "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D",
    },
  });
