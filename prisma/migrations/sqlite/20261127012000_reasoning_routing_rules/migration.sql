-- Routing rules per organization (issue 18: a preferred model per task and complexity)
CREATE TABLE "routing_rule" (
    "org_did" TEXT NOT NULL,
    "task" TEXT NOT NULL,
    "complexity" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "set_by" TEXT,
    "proposal_id" TEXT,
    "updated_at" DATETIME NOT NULL,

    PRIMARY KEY ("org_did", "task", "complexity")
);
