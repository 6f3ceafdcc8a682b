-- Least privilege's evidence (issue 31): per organization, delegation, capability and UTC day of
-- the call, the calls the gate let through (and the latest of them) and refused, under that
-- delegation or any derived from it: a record counts for its delegation and for each of its
-- ancestors (its `ancestry`, at most 16), so a key's usage is its own rows however many sessions
-- and runs derive from it. A trigger on "provenance_record" keeps it in the statement that appends
-- a record (records are never changed or deleted); the records written so far are summed in
-- below. A run's end record (`RUN /v1/agents/{id}`, the service recording the run's outcome under
-- its delegation) is not a call the grant made, so it is not counted. SQLite has one writer at a time, so every row is shard 0 (PostgreSQL spreads a
-- delegation's day over 8).

CREATE TABLE "delegation_usage_rollup" (
    "org_did" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "capability" TEXT NOT NULL,
    "day" TEXT NOT NULL,
    "shard" INTEGER NOT NULL,
    "calls" BIGINT NOT NULL,
    "refused" BIGINT NOT NULL,
    "last_used_at" DATETIME,

    PRIMARY KEY ("org_did", "delegation_id", "capability", "day", "shard")
);

-- A record's chain (its delegation's ancestors and itself) as a JSON array: ids are `dlg_` and
-- base32, nothing to escape.
INSERT INTO "delegation_usage_rollup" ("org_did", "delegation_id", "capability", "day", "shard", "calls", "refused", "last_used_at")
SELECT p."org_did", c."value", p."capability", substr(p."timestamp", 1, 10), 0, SUM(CASE WHEN p."decision" = 'allowed' THEN 1 ELSE 0 END), SUM(CASE WHEN p."decision" = 'allowed' THEN 0 ELSE 1 END), MAX(CASE WHEN p."decision" = 'allowed' THEN p."timestamp" END)
  FROM "provenance_record" p
  JOIN json_each('["' || replace(trim(COALESCE((SELECT d."ancestry" FROM "delegation" d WHERE d."id" = p."delegation_id"), '') || ' ' || p."delegation_id"), ' ', '","') || '"]') c
 WHERE p."delegation_id" IS NOT NULL AND p."capability" IS NOT NULL AND p."operation" NOT LIKE 'RUN %'
 GROUP BY p."org_did", c."value", p."capability", substr(p."timestamp", 1, 10);

CREATE TRIGGER "provenance_record_usage_rollup" AFTER INSERT ON "provenance_record"
WHEN NEW."delegation_id" IS NOT NULL AND NEW."capability" IS NOT NULL AND NEW."operation" NOT LIKE 'RUN %'
BEGIN
  INSERT INTO "delegation_usage_rollup" ("org_did", "delegation_id", "capability", "day", "shard", "calls", "refused", "last_used_at")
  SELECT NEW."org_did", "value", NEW."capability", substr(NEW."timestamp", 1, 10), 0, CASE WHEN NEW."decision" = 'allowed' THEN 1 ELSE 0 END, CASE WHEN NEW."decision" = 'allowed' THEN 0 ELSE 1 END, CASE WHEN NEW."decision" = 'allowed' THEN NEW."timestamp" END
    FROM json_each('["' || replace(trim(COALESCE((SELECT "ancestry" FROM "delegation" WHERE "id" = NEW."delegation_id"), '') || ' ' || NEW."delegation_id"), ' ', '","') || '"]')
   WHERE true
  ON CONFLICT ("org_did", "delegation_id", "capability", "day", "shard") DO UPDATE SET
    "calls" = "delegation_usage_rollup"."calls" + excluded."calls",
    "refused" = "delegation_usage_rollup"."refused" + excluded."refused",
    "last_used_at" = CASE WHEN excluded."last_used_at" IS NOT NULL AND ("delegation_usage_rollup"."last_used_at" IS NULL OR excluded."last_used_at" > "delegation_usage_rollup"."last_used_at") THEN excluded."last_used_at" ELSE "delegation_usage_rollup"."last_used_at" END;
END;

-- A delegation narrowed in place by a learning proposal, or restored by its rollback: one row per
-- delegation changed (the target and each derived delegation the narrowing cascaded to).
CREATE TABLE "delegation_narrowing" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "proposal_id" TEXT,
    "action" TEXT NOT NULL,
    "from_capabilities" TEXT NOT NULL,
    "to_capabilities" TEXT NOT NULL,
    "actor_did" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("id")
);

CREATE INDEX "delegation_narrowing_org_did_delegation_id_created_at_idx" ON "delegation_narrowing"("org_did", "delegation_id", "created_at");
CREATE INDEX "delegation_narrowing_proposal_id_idx" ON "delegation_narrowing"("proposal_id");
