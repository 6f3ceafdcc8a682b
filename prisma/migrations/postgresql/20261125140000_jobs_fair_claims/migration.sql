-- Fair claims (issue 15): the organizations with queued jobs of a kind, each one's oldest, by index.
CREATE INDEX "job_state_kind_org_did_available_at_idx" ON "job"("state", "kind", "org_did", "available_at");
