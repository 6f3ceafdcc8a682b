-- The halves of a pending record's RFC 8785 JSON around its seq, computed by the writer so that
-- PostgreSQL's integrator only joins them and hashes (see the PostgreSQL migration of the same
-- name). SQLite gives a record its position in its own transaction and never leaves one pending;
-- the columns keep the two engines' tables alike. Added in place: "provenance_record" is not rebuilt.
ALTER TABLE "ledger_pending" ADD COLUMN "leaf_before" TEXT;
ALTER TABLE "ledger_pending" ADD COLUMN "leaf_after" TEXT;
