-- The ledger's integrator (server/ledger/integrate.ts) in one statement: a caller sends
-- `SELECT * FROM "ledger_integrate"(500)`, on its own (autocommit), and gets back how many records
-- it gave a position, the tree size after them and the time it held the lock (µs, commit
-- excluded). Statements inside a function take their snapshot when they start, so everything
-- after the lock sees every record committed before it was granted; the round costs its caller
-- one round trip, its own transaction included.
--
-- The lock is the one every write took before its commit until now (0x53764c67): a process of the
-- previous version, appending under it, and an integrator never number records at once. A caller
-- that finds it held waits for it in the database, and its round then begins after the holder's
-- commit: the holder has integrated everything it saw, and this round the rest, nothing is
-- polled and no message is needed. (Not NOTIFY: PostgreSQL serializes the commits of every
-- transaction that notifies, cluster-wide, and holds that lock through the commit; the job queue
-- notifies from writes, so the integrator would wait behind their disk flushes.)
--
-- Under the lock, one INSERT … SELECT takes up to `batch` pending records, oldest first (timestamp,
-- then id), numbers them from the head of the ledger (row_number over that order, from MAX(seq) + 1
-- read in the same statement) and computes each leaf hash, base64 SHA-256(0x00 ‖ the record's RFC
-- 8785 canonical JSON), from the two halves of that JSON around the seq which the writer computed
-- and stored with the record (leaf_before, leaf_after: the JSON work is done concurrently, outside
-- the lock). A record without them (written by hand, or by a version that did not store them) has
-- its JSON built here, key by key in RFC 8785's order (UTF-16 code units: actor_did … trace_id),
-- each string through to_json, which escapes exactly as ECMAScript's JSON.stringify does (\" \\
-- \b \f \n \r \t, other controls as \u00xx, nothing else), integers as decimals, the timestamp
-- as toISOString() writes it, and trace_id only when set: the bytes `leafBytes`
-- (server/provenance/record.ts) makes, which tests/integration/ledgerSealing.test.ts checks with
-- awkward strings. The records leave "ledger_pending" in the same transaction (its guard lets a
-- row go only once its record is in "provenance_record").
--
-- The round commits without waiting for its WAL to reach the disk (synchronous_commit off for this
-- transaction only): the lock is held for the work, not for a disk flush. The records themselves
-- were made durable by their writers' commits; a position becomes durable with the next commit
-- that waits for the disk (any write's, within wal_writer_delay at the latest), and a checkpoint,
-- signed in such a commit after reading the positions, never covers one that is not. A database
-- crash in between returns the round's records to "ledger_pending", to be integrated again (no gap,
-- no record lost; their positions come out the same unless an older record committed meanwhile).
ALTER TABLE "ledger_pending" ADD COLUMN "leaf_before" TEXT, ADD COLUMN "leaf_after" TEXT;

CREATE FUNCTION "ledger_integrate"("batch" INTEGER)
RETURNS TABLE ("integrated" INTEGER, "tree_size" BIGINT, "held_us" DOUBLE PRECISION)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    "t0" TIMESTAMPTZ;
    "moved" TEXT[];
    "size" BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(1400261735);
    "t0" := clock_timestamp();
    -- Through the (timestamp, id) index, as the batch below: a heap scan would step over every
    -- dead row since the last vacuum.
    PERFORM 1 FROM "ledger_pending" ORDER BY "timestamp", "id" LIMIT 1;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 0, NULL::BIGINT, extract(epoch FROM clock_timestamp() - "t0")::DOUBLE PRECISION * 1e6;
        RETURN;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM set_config('svc.ledger_integrator', 'on', true);
    WITH "taken" AS (
        SELECT p.*, h."next" + row_number() OVER (ORDER BY p."timestamp", p."id") - 1 AS "seq"
          FROM (SELECT * FROM "ledger_pending" ORDER BY "timestamp", "id" LIMIT "batch") p
         CROSS JOIN (SELECT COALESCE(MAX("seq") + 1, 0) AS "next" FROM "provenance_record") h
    ), "inserted" AS (
        INSERT INTO "provenance_record" ("id", "seq", "timestamp", "org_did", "actor_did", "delegation_id",
            "grantor_did", "capability", "operation", "resource_type", "resource_id", "decision", "status",
            "request_hash", "request_id", "leaf_hash", "trace_id")
        SELECT t."id", t."seq", t."timestamp", t."org_did", t."actor_did", t."delegation_id", t."grantor_did",
               t."capability", t."operation", t."resource_type", t."resource_id", t."decision", t."status",
               t."request_hash", t."request_id",
               encode(sha256('\x00'::bytea || convert_to(COALESCE(
                   t."leaf_before" || t."seq"::text || t."leaf_after",
                   '{"actor_did":' || COALESCE(to_json(t."actor_did")::text, 'null')
                || ',"capability":' || COALESCE(to_json(t."capability")::text, 'null')
                || ',"decision":' || to_json(t."decision")::text
                || ',"delegation_id":' || COALESCE(to_json(t."delegation_id")::text, 'null')
                || ',"grantor_did":' || COALESCE(to_json(t."grantor_did")::text, 'null')
                || ',"id":' || to_json(t."id")::text
                || ',"operation":' || to_json(t."operation")::text
                || ',"org_did":' || to_json(t."org_did")::text
                || ',"request_hash":' || to_json(t."request_hash")::text
                || ',"request_id":' || to_json(t."request_id")::text
                || ',"resource_id":' || COALESCE(to_json(t."resource_id")::text, 'null')
                || ',"resource_type":' || COALESCE(to_json(t."resource_type")::text, 'null')
                || ',"seq":' || t."seq"::text
                || ',"status":' || t."status"::text
                || ',"timestamp":"' || to_char(t."timestamp", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
                || CASE WHEN t."trace_id" IS NULL THEN '' ELSE ',"trace_id":' || to_json(t."trace_id")::text END
                || '}'), 'UTF8')), 'base64'),
               t."trace_id"
          FROM "taken" t
        RETURNING "id", "seq"
    ), "rolled_up" AS (
        INSERT INTO "delegation_usage_rollup" ("org_did", "delegation_id", "capability", "day", "shard", "calls", "refused", "last_used_at")
        SELECT t."org_did", c."id", t."capability", to_char(t."timestamp", 'YYYY-MM-DD'), 0,
               SUM(CASE WHEN t."decision" = 'allowed' THEN 1 ELSE 0 END),
               SUM(CASE WHEN t."decision" = 'allowed' THEN 0 ELSE 1 END),
               MAX(CASE WHEN t."decision" = 'allowed' THEN t."timestamp" END)
          FROM "taken" t
          LEFT JOIN "delegation" d ON d."id" = t."delegation_id"
         CROSS JOIN LATERAL unnest(string_to_array(trim(COALESCE(d."ancestry", '') || ' ' || t."delegation_id"), ' ')) AS c("id")
         WHERE t."delegation_id" IS NOT NULL AND t."capability" IS NOT NULL AND t."operation" NOT LIKE 'RUN %'
         GROUP BY t."org_did", c."id", t."capability", to_char(t."timestamp", 'YYYY-MM-DD')
        ON CONFLICT ("org_did", "delegation_id", "capability", "day", "shard") DO UPDATE SET
          "calls" = "delegation_usage_rollup"."calls" + excluded."calls",
          "refused" = "delegation_usage_rollup"."refused" + excluded."refused",
          "last_used_at" = GREATEST("delegation_usage_rollup"."last_used_at", excluded."last_used_at")
    )
    SELECT array_agg("id"), MAX("seq") + 1 INTO "moved", "size" FROM "inserted";
    IF "moved" IS NOT NULL THEN
        DELETE FROM "ledger_pending" WHERE "id" = ANY ("moved");
    END IF;
    RETURN QUERY SELECT COALESCE(cardinality("moved"), 0), "size",
        extract(epoch FROM clock_timestamp() - "t0")::DOUBLE PRECISION * 1e6;
END;
$$;

-- Least privilege's usage rollup (migration 20261128080000) is kept by a row trigger on
-- "provenance_record", an upsert per record and per delegation of its chain, in the statement that
-- appends the record. Records are now appended by the integrator, a batch per statement, under its
-- lock: the integrator sums its batch itself (the `rolled_up` step above: one upsert per
-- organization, delegation, capability and day of the batch, all on shard 0: one integrator at a
-- time writes them, and readers sum the shards), and the trigger stands aside for it
-- (`svc.ledger_integrator`, set for the integrator's transaction only) while still counting any
-- record appended otherwise. A per-statement trigger over a transition table would do the same
-- sums, but PostgreSQL plans its query anew at every statement: ten times the cost of the step.
DROP TRIGGER "provenance_record_usage_rollup" ON "provenance_record";
CREATE TRIGGER "provenance_record_usage_rollup" AFTER INSERT ON "provenance_record"
    FOR EACH ROW WHEN (NEW."delegation_id" IS NOT NULL AND NEW."capability" IS NOT NULL AND NEW."operation" NOT LIKE 'RUN %'
        AND current_setting('svc.ledger_integrator', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "delegation_usage_rollup_apply"();

-- The pending table's guard (migration 20261128090000) checks, for every row deleted, that its
-- record is in "provenance_record": the integrator deletes exactly the rows it has just inserted,
-- in the same statement's transaction, so its deletes skip the check (the same setting); any other
-- delete is still refused unless the record was integrated.
DROP TRIGGER "ledger_pending_no_update" ON "ledger_pending";
CREATE TRIGGER "ledger_pending_no_update" BEFORE UPDATE OR DELETE ON "ledger_pending"
    FOR EACH ROW WHEN (current_setting('svc.ledger_integrator', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "ledger_pending_guard"();

-- A queue: rows live milliseconds, so dead ones pile up between vacuums and every round's scan for
-- the oldest would step over them. Vacuumed at every autovacuum pass that finds a thousand, and by
-- the worker's ledger task (server/ledger/tasks.ts).
ALTER TABLE "ledger_pending" SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
