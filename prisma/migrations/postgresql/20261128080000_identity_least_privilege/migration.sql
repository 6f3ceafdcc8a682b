-- Least privilege's evidence (issue 31): per organization, delegation, capability and UTC day of
-- the call, the calls the gate let through (and the latest of them) and refused, under that
-- delegation or any derived from it: a record counts for its delegation and for each of its
-- ancestors (its `ancestry`, at most 16), so a key's usage is its own rows however many sessions
-- and runs derive from it. A trigger on "provenance_record" keeps it in the statement that appends
-- a record (records are never changed or deleted); the records written so far are summed in below.
--
-- A row's upsert holds its lock until the appending transaction commits: one row per delegation
-- and day would queue every concurrent call of one key (and of everything derived from it) behind
-- the previous one's commit. So a day is spread over 8 shards, chosen by a hash of the record id
-- (two concurrent calls of one key meet on a row one time in 8); readers sum over them. A run's
-- end record (`RUN /v1/agents/{id}`, the service recording the run's outcome under its delegation)
-- is not a call the grant made, so it is not counted.

CREATE TABLE "delegation_usage_rollup" (
    "org_did" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "day" TEXT NOT NULL,
    "shard" INTEGER NOT NULL,
    "calls" BIGINT NOT NULL,
    "refused" BIGINT NOT NULL,
    "last_used_at" TIMESTAMP(3),

    CONSTRAINT "delegation_usage_rollup_pkey" PRIMARY KEY ("org_did", "delegation_id", "capability", "day", "shard")
);

INSERT INTO "delegation_usage_rollup" ("org_did", "delegation_id", "capability", "day", "shard", "calls", "refused", "last_used_at")
SELECT p."org_did", c."id", p."capability", to_char(p."timestamp", 'YYYY-MM-DD'), 0, SUM(CASE WHEN p."decision" = 'allowed' THEN 1 ELSE 0 END), SUM(CASE WHEN p."decision" = 'allowed' THEN 0 ELSE 1 END), MAX(CASE WHEN p."decision" = 'allowed' THEN p."timestamp" END)
  FROM "provenance_record" p
  CROSS JOIN LATERAL unnest(string_to_array(trim(COALESCE((SELECT d."ancestry" FROM "delegation" d WHERE d."id" = p."delegation_id"), '') || ' ' || p."delegation_id"), ' ')) AS c("id")
 WHERE p."delegation_id" IS NOT NULL AND p."capability" IS NOT NULL AND p."operation" NOT LIKE 'RUN %'
 GROUP BY p."org_did", c."id", p."capability", to_char(p."timestamp", 'YYYY-MM-DD');

CREATE FUNCTION "delegation_usage_rollup_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "delegation_usage_rollup" ("org_did", "delegation_id", "capability", "day", "shard", "calls", "refused", "last_used_at")
    SELECT NEW."org_did", c."id", NEW."capability", to_char(NEW."timestamp", 'YYYY-MM-DD'), hashtext(NEW."id") & 7, CASE WHEN NEW."decision" = 'allowed' THEN 1 ELSE 0 END, CASE WHEN NEW."decision" = 'allowed' THEN 0 ELSE 1 END, CASE WHEN NEW."decision" = 'allowed' THEN NEW."timestamp" END
      FROM unnest(string_to_array(trim(COALESCE((SELECT "ancestry" FROM "delegation" WHERE "id" = NEW."delegation_id"), '') || ' ' || NEW."delegation_id"), ' ')) AS c("id")
    ON CONFLICT ("org_did", "delegation_id", "capability", "day", "shard") DO UPDATE SET
      "calls" = "delegation_usage_rollup"."calls" + excluded."calls",
      "refused" = "delegation_usage_rollup"."refused" + excluded."refused",
      "last_used_at" = GREATEST("delegation_usage_rollup"."last_used_at", excluded."last_used_at");
    RETURN NULL;
END;
$$;

CREATE TRIGGER "provenance_record_usage_rollup" AFTER INSERT ON "provenance_record"
    FOR EACH ROW WHEN (NEW."delegation_id" IS NOT NULL AND NEW."capability" IS NOT NULL AND NEW."operation" NOT LIKE 'RUN %')
    EXECUTE FUNCTION "delegation_usage_rollup_apply"();

-- A delegation narrowed in place by a learning proposal, or restored by its rollback: one row per
-- delegation changed (the target and each derived delegation the narrowing cascaded to).
CREATE TABLE "delegation_narrowing" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "proposal_id" TEXT,
    "action" TEXT NOT NULL,
    "from_capabilities" JSONB NOT NULL,
    "to_capabilities" JSONB NOT NULL,
    "actor_did" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "delegation_narrowing_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "delegation_narrowing_org_did_delegation_id_created_at_idx" ON "delegation_narrowing"("org_did", "delegation_id", "created_at");
CREATE INDEX "delegation_narrowing_proposal_id_idx" ON "delegation_narrowing"("proposal_id");
