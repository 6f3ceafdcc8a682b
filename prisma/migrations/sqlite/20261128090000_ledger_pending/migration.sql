-- The ledger off the global lock: a governed write inserts its record here, in its own transaction,
-- without a position; one integrator at a time moves pending records into "provenance_record" in
-- batches, giving each the next leaf index (seq) and its leaf hash. Existing records keep theirs.
CREATE TABLE "ledger_pending" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "timestamp" DATETIME NOT NULL,
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
    "trace_id" TEXT
);

CREATE INDEX "ledger_pending_timestamp_id_idx" ON "ledger_pending"("timestamp", "id");

-- A pending record is as immutable as an integrated one: never changed, and removed only once the
-- integrator has written it, with its position, into "provenance_record" (same transaction).
CREATE TRIGGER "ledger_pending_no_update" BEFORE UPDATE ON "ledger_pending"
BEGIN
    SELECT RAISE(ABORT, 'provenance records are immutable');
END;

CREATE TRIGGER "ledger_pending_no_delete" BEFORE DELETE ON "ledger_pending"
WHEN NOT EXISTS (SELECT 1 FROM "provenance_record" WHERE "id" = OLD."id")
BEGIN
    SELECT RAISE(ABORT, 'provenance records are immutable');
END;
