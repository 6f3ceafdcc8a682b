-- Each attempt of an execution, the attempt that logged each line, and the delegation trigger runs derive from.
CREATE TABLE "execution_attempt" (
    "id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "worker_id" TEXT,
    "status" TEXT NOT NULL,
    "error_json" JSONB,
    "started_at" TIMESTAMP(3) NOT NULL,
    "ended_at" TIMESTAMP(3),
    CONSTRAINT "execution_attempt_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "execution_attempt_execution_id_attempt_key" ON "execution_attempt"("execution_id", "attempt");
ALTER TABLE "execution_attempt" ADD CONSTRAINT "execution_attempt_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "async_execution"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "execution_log" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "agent" ADD COLUMN "trigger_delegation_id" TEXT;
ALTER TABLE "agent_version" ADD COLUMN "trigger_delegation_id" TEXT;
