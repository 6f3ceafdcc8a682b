-- Each attempt of an execution, the attempt that logged each line, and the delegation trigger runs derive from.
CREATE TABLE "execution_attempt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "execution_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "worker_id" TEXT,
    "status" TEXT NOT NULL,
    "error_json" TEXT,
    "started_at" DATETIME NOT NULL,
    "ended_at" DATETIME,
    CONSTRAINT "execution_attempt_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "async_execution" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "execution_attempt_execution_id_attempt_key" ON "execution_attempt"("execution_id", "attempt");

ALTER TABLE "execution_log" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "agent" ADD COLUMN "trigger_delegation_id" TEXT;
ALTER TABLE "agent_version" ADD COLUMN "trigger_delegation_id" TEXT;
