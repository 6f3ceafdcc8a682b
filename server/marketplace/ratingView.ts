/** A rating row as the API shows it (ConnectorRating). */
export function ratingView(row: {
  id: string;
  rating: number;
  reviewText: string | null;
  userId: string;
  displayName: string;
  createdAt: Date;
  updatedAt: Date;
}) {
  return {
    rating_id: row.id,
    rating: row.rating,
    review_text: row.reviewText,
    user: { user_id: row.userId, display_name: row.displayName },
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
