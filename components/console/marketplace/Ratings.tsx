"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Star } from "lucide-react";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { FormField } from "@/components/ui/form-field";
import { Card } from "@/components/ui/primitives";
import { RatingRequest } from "@/server/marketplace/schemas";
import { when } from "../executionFormat";
import { applyProblem, useTRPC } from "../Providers";
import type { Connector } from "./ConnectorPage";
import { Stars } from "./marketplaceFormat";

const GRADES = ["5", "4", "3", "2", "1"] as const;

const RatingForm = z.object({
  // 0 until a star is chosen: the button stays disabled until then.
  rating: RatingRequest.shape.rating,
  review_text: z.string().trim().pipe(RatingRequest.shape.review_text.unwrap().unwrap()),
});

/**
 * A connector's ratings: the computed summary (average and distribution), the reviews, and a
 * form to rate it. Only organizations that invoked the connector successfully may rate; the
 * server's 403 says so, and the form shows that reason where the button was.
 */
export function Ratings({ connector: c }: { connector: Connector }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const summary = useQuery(trpc.marketplace.ratingSummary.queryOptions({ id: c.connector_id }));
  const list = useInfiniteQuery(
    trpc.marketplace.ratings.infiniteQueryOptions(
      { id: c.connector_id, limit: 10 },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const form = useForm<z.infer<typeof RatingForm>>({
    resolver: zodResolver(RatingForm),
    defaultValues: { rating: 0, review_text: "" },
  });
  // Not a field: the star under the pointer, previewed.
  const [hover, setHover] = useState(0);
  const rate = useMutation(
    trpc.marketplace.rate.mutationOptions({
      onSuccess: () => {
        toast.success("Thanks: your rating is saved");
        void queryClient.invalidateQueries({ queryKey: trpc.marketplace.ratings.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.marketplace.ratingSummary.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.marketplace.connector.pathKey() });
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const s = summary.data;
  const rating = form.watch("rating");
  const errors = form.formState.errors;
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section aria-labelledby="ratings-h" className="space-y-3">
      <h2 id="ratings-h" className="text-lg font-semibold">
        Ratings and reviews
      </h2>
      <Card className="grid gap-5 p-4 sm:grid-cols-[10rem_1fr]">
        <div className="flex flex-col items-start gap-1">
          <span className="text-4xl font-semibold tabular-nums">{s && s.count > 0 ? s.average.toFixed(1) : "–"}</span>
          <Stars value={s && s.count > 0 ? s.average : null} />
          <span className="text-xs text-muted-foreground">
            {s ? `${s.count} rating${s.count === 1 ? "" : "s"}` : "…"}
          </span>
        </div>
        <dl className="grid gap-1 text-xs" aria-label="Distribution of ratings">
          {GRADES.map((g) => {
            const n = s?.distribution[g] ?? 0;
            const share = s && s.count > 0 ? (n / s.count) * 100 : 0;
            return (
              <div key={g} className="grid grid-cols-[2.5rem_1fr_2rem] items-center gap-2">
                <dt className="text-muted-foreground">{g} star</dt>
                <dd className="h-2 overflow-hidden rounded-full bg-muted" aria-hidden>
                  <div className="h-full rounded-full bg-warning" style={{ width: `${share}%` }} />
                </dd>
                <dd className="text-right tabular-nums">{n}</dd>
              </div>
            );
          })}
        </dl>
      </Card>
      <Card className="p-4">
        <form
          className="grid gap-3"
          onSubmit={form.handleSubmit(({ rating, review_text }) =>
            rate.mutate({ id: c.connector_id, rating, ...(review_text ? { review_text } : {}) }),
          )}
        >
          <fieldset>
            <legend className="mb-1 text-sm font-medium">Your rating</legend>
            <div className="flex gap-0.5" onMouseLeave={() => setHover(0)}>
              {[1, 2, 3, 4, 5].map((n) => (
                <label key={n} className="cursor-pointer" onMouseEnter={() => setHover(n)}>
                  <input
                    type="radio"
                    name="rating"
                    value={n}
                    className="peer sr-only"
                    checked={rating === n}
                    onChange={() => form.setValue("rating", n)}
                  />
                  <span className="sr-only">
                    {n} star{n === 1 ? "" : "s"}
                  </span>
                  <Star
                    aria-hidden
                    className={cn(
                      "h-7 w-7 rounded peer-focus-visible:ring-2 peer-focus-visible:ring-ring",
                      (hover || rating) >= n ? "fill-warning text-warning" : "text-muted-foreground/50",
                    )}
                  />
                </label>
              ))}
            </div>
          </fieldset>
          <FormField id="r-review" label="Review (optional)" error={errors.review_text?.message}>
            {(control) => (
              <textarea
                {...control}
                rows={3}
                maxLength={2000}
                className="w-full rounded-md border border-border bg-card px-3 py-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                placeholder="What did it do well for you?"
                {...form.register("review_text")}
              />
            )}
          </FormField>
          {errors.root?.message ? (
            <p role="alert" className="text-sm text-destructive">
              {errors.root.message}
            </p>
          ) : null}
          <div>
            <Button type="submit" variant="outline" disabled={rating === 0 || rate.isPending}>
              Submit rating
            </Button>
          </div>
        </form>
      </Card>
      <ul className="space-y-2" aria-label="Reviews">
        {rows.map((r) => (
          <li key={r.rating_id}>
            <Card className="p-3">
              <div className="flex flex-wrap items-center justify-between gap-2">
                <span className="text-sm font-medium">{r.user.display_name}</span>
                <span className="text-xs text-muted-foreground">{when(r.updated_at)}</span>
              </div>
              <Stars value={r.rating} />
              {r.review_text ? <p className="mt-1 whitespace-pre-wrap text-sm">{r.review_text}</p> : null}
            </Card>
          </li>
        ))}
      </ul>
      {!list.isPending && rows.length === 0 ? <p className="text-sm text-muted-foreground">No reviews yet.</p> : null}
      {list.hasNextPage ? (
        <Button variant="outline" size="sm" onClick={() => void list.fetchNextPage()}>
          More reviews
        </Button>
      ) : null}
    </section>
  );
}
