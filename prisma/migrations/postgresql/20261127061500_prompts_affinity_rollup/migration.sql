-- The prompt performance and affinity reports' rollup (issue 19, "Speed"): per organization, prompt
-- version, model, provider and UTC day of the call, the sums the reports need over the completed
-- calls. Triggers on "reasoning_call" keep it in the statement that settles a call or changes its
-- feedback (a late feedback updates the day of the call, not of the feedback); the rows recorded
-- so far are summed in below.

CREATE TABLE "prompt_call_rollup" (
    "org_did" TEXT NOT NULL,
    "prompt_key" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "prompt_version" TEXT NOT NULL,
    "day" TEXT NOT NULL,
    "calls" BIGINT NOT NULL,
    "succeeded" BIGINT NOT NULL,
    "timed" BIGINT NOT NULL,
    "duration_sum" BIGINT NOT NULL,
    "cost_sum" DOUBLE PRECISION NOT NULL,
    "token_sum" BIGINT NOT NULL,
    "positive" BIGINT NOT NULL,
    "negative" BIGINT NOT NULL,
    "rephrases" BIGINT NOT NULL,
    "corrections" BIGINT NOT NULL,

    CONSTRAINT "prompt_call_rollup_pkey" PRIMARY KEY ("org_did", "prompt_key", "model", "provider", "prompt_version", "day")
);

INSERT INTO "prompt_call_rollup" ("org_did", "prompt_key", "model", "provider", "prompt_version", "day", "calls", "succeeded", "timed", "duration_sum", "cost_sum", "token_sum", "positive", "negative", "rephrases", "corrections")
SELECT "org_did", "prompt_key", "model", "provider", COALESCE("prompt_version", ''), to_char("created_at", 'YYYY-MM-DD'), COUNT(*), SUM(CASE WHEN "status" = 'succeeded' THEN 1 ELSE 0 END), SUM(CASE WHEN "duration_ms" IS NULL THEN 0 ELSE 1 END), SUM(COALESCE("duration_ms", 0)), SUM("cost_usd"), SUM("input_tokens" + "output_tokens"), SUM(CASE WHEN "feedback_signal" = 'positive' THEN 1 ELSE 0 END), SUM(CASE WHEN "feedback_signal" = 'negative' THEN 1 ELSE 0 END), SUM(CASE WHEN "feedback_signal" = 'rephrase' THEN 1 ELSE 0 END), SUM(CASE WHEN "feedback_signal" = 'correction' THEN 1 ELSE 0 END)
  FROM "reasoning_call"
 WHERE "status" <> 'pending' AND "prompt_key" IS NOT NULL AND "model" IS NOT NULL AND "provider" IS NOT NULL
 GROUP BY "org_did", "prompt_key", "model", "provider", COALESCE("prompt_version", ''), to_char("created_at", 'YYYY-MM-DD');

-- One function for every change of a call, in the same transaction: a completed call with a prompt,
-- a model and a provider counts; a change under the same row adds the differences only (so an
-- unchanged sum stays exactly what it was); otherwise the old row loses the call and the new gains it.
CREATE FUNCTION "prompt_call_rollup_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was BOOLEAN := TG_OP <> 'INSERT' AND OLD."status" <> 'pending' AND OLD."prompt_key" IS NOT NULL AND OLD."model" IS NOT NULL AND OLD."provider" IS NOT NULL;
    now_counts BOOLEAN := TG_OP <> 'DELETE' AND NEW."status" <> 'pending' AND NEW."prompt_key" IS NOT NULL AND NEW."model" IS NOT NULL AND NEW."provider" IS NOT NULL;
BEGIN
    IF was AND now_counts AND OLD."org_did" = NEW."org_did" AND OLD."prompt_key" = NEW."prompt_key" AND OLD."model" = NEW."model" AND OLD."provider" = NEW."provider" AND COALESCE(OLD."prompt_version", '') = COALESCE(NEW."prompt_version", '') AND to_char(OLD."created_at", 'YYYY-MM-DD') = to_char(NEW."created_at", 'YYYY-MM-DD') THEN
        UPDATE "prompt_call_rollup" SET "succeeded" = "succeeded" + ((CASE WHEN NEW."status" = 'succeeded' THEN 1 ELSE 0 END) - (CASE WHEN OLD."status" = 'succeeded' THEN 1 ELSE 0 END)), "timed" = "timed" + ((CASE WHEN NEW."duration_ms" IS NULL THEN 0 ELSE 1 END) - (CASE WHEN OLD."duration_ms" IS NULL THEN 0 ELSE 1 END)), "duration_sum" = "duration_sum" + ((COALESCE(NEW."duration_ms", 0)) - (COALESCE(OLD."duration_ms", 0))), "cost_sum" = "cost_sum" + ((NEW."cost_usd") - (OLD."cost_usd")), "token_sum" = "token_sum" + ((NEW."input_tokens" + NEW."output_tokens") - (OLD."input_tokens" + OLD."output_tokens")), "positive" = "positive" + ((CASE WHEN NEW."feedback_signal" = 'positive' THEN 1 ELSE 0 END) - (CASE WHEN OLD."feedback_signal" = 'positive' THEN 1 ELSE 0 END)), "negative" = "negative" + ((CASE WHEN NEW."feedback_signal" = 'negative' THEN 1 ELSE 0 END) - (CASE WHEN OLD."feedback_signal" = 'negative' THEN 1 ELSE 0 END)), "rephrases" = "rephrases" + ((CASE WHEN NEW."feedback_signal" = 'rephrase' THEN 1 ELSE 0 END) - (CASE WHEN OLD."feedback_signal" = 'rephrase' THEN 1 ELSE 0 END)), "corrections" = "corrections" + ((CASE WHEN NEW."feedback_signal" = 'correction' THEN 1 ELSE 0 END) - (CASE WHEN OLD."feedback_signal" = 'correction' THEN 1 ELSE 0 END))
         WHERE "org_did" = NEW."org_did" AND "prompt_key" = NEW."prompt_key" AND "model" = NEW."model" AND "provider" = NEW."provider" AND "prompt_version" = COALESCE(NEW."prompt_version", '') AND "day" = to_char(NEW."created_at", 'YYYY-MM-DD');
        RETURN NULL;
    END IF;
    IF was THEN
        UPDATE "prompt_call_rollup" SET "calls" = "calls" - 1, "succeeded" = "succeeded" - (CASE WHEN OLD."status" = 'succeeded' THEN 1 ELSE 0 END), "timed" = "timed" - (CASE WHEN OLD."duration_ms" IS NULL THEN 0 ELSE 1 END), "duration_sum" = "duration_sum" - (COALESCE(OLD."duration_ms", 0)), "cost_sum" = "cost_sum" - OLD."cost_usd", "token_sum" = "token_sum" - (OLD."input_tokens" + OLD."output_tokens"), "positive" = "positive" - (CASE WHEN OLD."feedback_signal" = 'positive' THEN 1 ELSE 0 END), "negative" = "negative" - (CASE WHEN OLD."feedback_signal" = 'negative' THEN 1 ELSE 0 END), "rephrases" = "rephrases" - (CASE WHEN OLD."feedback_signal" = 'rephrase' THEN 1 ELSE 0 END), "corrections" = "corrections" - (CASE WHEN OLD."feedback_signal" = 'correction' THEN 1 ELSE 0 END)
         WHERE "org_did" = OLD."org_did" AND "prompt_key" = OLD."prompt_key" AND "model" = OLD."model" AND "provider" = OLD."provider" AND "prompt_version" = COALESCE(OLD."prompt_version", '') AND "day" = to_char(OLD."created_at", 'YYYY-MM-DD');
        DELETE FROM "prompt_call_rollup" WHERE "org_did" = OLD."org_did" AND "prompt_key" = OLD."prompt_key" AND "model" = OLD."model" AND "provider" = OLD."provider" AND "prompt_version" = COALESCE(OLD."prompt_version", '') AND "day" = to_char(OLD."created_at", 'YYYY-MM-DD') AND "calls" = 0;
    END IF;
    IF now_counts THEN
        INSERT INTO "prompt_call_rollup" ("org_did", "prompt_key", "model", "provider", "prompt_version", "day", "calls", "succeeded", "timed", "duration_sum", "cost_sum", "token_sum", "positive", "negative", "rephrases", "corrections")
        VALUES (NEW."org_did", NEW."prompt_key", NEW."model", NEW."provider", COALESCE(NEW."prompt_version", ''), to_char(NEW."created_at", 'YYYY-MM-DD'), 1, CASE WHEN NEW."status" = 'succeeded' THEN 1 ELSE 0 END, CASE WHEN NEW."duration_ms" IS NULL THEN 0 ELSE 1 END, COALESCE(NEW."duration_ms", 0), NEW."cost_usd", NEW."input_tokens" + NEW."output_tokens", CASE WHEN NEW."feedback_signal" = 'positive' THEN 1 ELSE 0 END, CASE WHEN NEW."feedback_signal" = 'negative' THEN 1 ELSE 0 END, CASE WHEN NEW."feedback_signal" = 'rephrase' THEN 1 ELSE 0 END, CASE WHEN NEW."feedback_signal" = 'correction' THEN 1 ELSE 0 END)
        ON CONFLICT ("org_did", "prompt_key", "model", "provider", "prompt_version", "day") DO UPDATE SET
          "calls" = "prompt_call_rollup"."calls" + excluded."calls", "succeeded" = "prompt_call_rollup"."succeeded" + excluded."succeeded", "timed" = "prompt_call_rollup"."timed" + excluded."timed", "duration_sum" = "prompt_call_rollup"."duration_sum" + excluded."duration_sum", "cost_sum" = "prompt_call_rollup"."cost_sum" + excluded."cost_sum", "token_sum" = "prompt_call_rollup"."token_sum" + excluded."token_sum", "positive" = "prompt_call_rollup"."positive" + excluded."positive", "negative" = "prompt_call_rollup"."negative" + excluded."negative", "rephrases" = "prompt_call_rollup"."rephrases" + excluded."rephrases", "corrections" = "prompt_call_rollup"."corrections" + excluded."corrections";
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER "reasoning_call_rollup" AFTER INSERT OR DELETE OR UPDATE OF status, model, provider, prompt_key, prompt_version, created_at, duration_ms, cost_usd, input_tokens, output_tokens, feedback_signal, org_did ON "reasoning_call"
    FOR EACH ROW EXECUTE FUNCTION "prompt_call_rollup_apply"();
