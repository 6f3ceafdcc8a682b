-- The ledger off the global lock: a governed write inserts its record here, in its own transaction,
-- without a position; one integrator at a time moves pending records into "provenance_record" in
-- batches, giving each the next leaf index (seq) and its leaf hash. Existing records keep theirs.
CREATE TABLE "ledger_pending" (
    "id" TEXT NOT NULL,
    "timestamp" TIMESTAMP(3) NOT NULL,
    "org_did" TEXT NOT NULL,
    "actor_did" TEXT,
    "delegation_id" TEXT,
    "grantor_did" TEXT,
    "capability" TEXT,
    "operation" TEXT NOT NULL,
    "resource_type" TEXT,
    "resource_id" TEXT,
    "decision" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "request_hash" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "trace_id" TEXT,

    CONSTRAINT "ledger_pending_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "ledger_pending_timestamp_id_idx" ON "ledger_pending"("timestamp", "id");

-- A pending record is as immutable as an integrated one: never changed, and removed only once the
-- integrator has written it, with its position, into "provenance_record" (same transaction).
CREATE FUNCTION "ledger_pending_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM "provenance_record" WHERE "id" = OLD."id") THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'provenance records are immutable';
END;
$$;

CREATE TRIGGER "ledger_pending_no_update" BEFORE UPDATE OR DELETE ON "ledger_pending"
    FOR EACH ROW EXECUTE FUNCTION "ledger_pending_guard"();

CREATE TRIGGER "ledger_pending_no_truncate" BEFORE TRUNCATE ON "ledger_pending"
    FOR EACH STATEMENT EXECUTE FUNCTION "provenance_record_immutable"();
