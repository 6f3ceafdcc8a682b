import { z } from "zod";
import { PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { Timestamp } from "./connectorSchemas";

// Pure zod: ratings and their summary.

export const ConnectorRating = z
  .object({
    rating_id: z.string(),
    rating: z.number().int().min(1).max(5),
    review_text: z.string().nullable(),
    user: z.object({ user_id: z.string(), display_name: z.string() }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({
    id: "ConnectorRating",
    example: {
      rating_id: "rat_01m806mp6t2k9d8c7b6a5z4y3x",
      rating: 5,
      review_text: "Set up in a minute.",
      user: { user_id: "mem_01m806mp6t2k9d8c7b6a5z4y3x", display_name: "Ada" },
      created_at: EXAMPLE.createdAt,
      updated_at: EXAMPLE.createdAt,
    },
  });

export const RatingRequest = z
  .object({
    rating: z.number().int().min(1).max(5),
    review_text: z.string().max(5000).nullable().optional(),
  })
  .strict()
  .meta({ id: "RatingRequest", example: { rating: 5, review_text: "Set up in a minute." } });

export const RatingList = z
  .object({ data: z.array(ConnectorRating), pagination: PaginationInfo })
  .meta({ id: "RatingList", example: { data: [], pagination: { has_more: false, next_cursor: null } } });

export const RatingSummary = z
  .object({
    average: z.number().min(0).max(5).describe("0.00 to 5.00 (0 before the first rating)"),
    count: z.number().int(),
    distribution: z.object({
      "1": z.number().int(),
      "2": z.number().int(),
      "3": z.number().int(),
      "4": z.number().int(),
      "5": z.number().int(),
    }),
  })
  .meta({
    id: "RatingSummary",
    example: { average: 4.5, count: 4, distribution: { "1": 0, "2": 0, "3": 0, "4": 2, "5": 2 } },
  });
