-- The inbox's order (riskiest, newest, then id) read straight from the index: without `id` in
-- it, SQLite sorted each page's last term in a temporary B-tree.

-- DropIndex
DROP INDEX "approval_request_org_did_status_risk_rank_created_at_idx";

-- CreateIndex
CREATE INDEX "approval_request_org_did_status_risk_rank_created_at_id_idx" ON "approval_request"("org_did", "status", "risk_rank", "created_at", "id");
