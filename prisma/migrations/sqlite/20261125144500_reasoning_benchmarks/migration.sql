-- Model benchmark results (issue 18 item 6)
CREATE TABLE "model_benchmark" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,
    "benchmark_type" TEXT NOT NULL,
    "benchmark_suite" TEXT NOT NULL,
    "score" REAL NOT NULL,
    "run_at" DATETIME NOT NULL,
    "run_by" TEXT NOT NULL,
    "test_cases_passed" INTEGER,
    "test_cases_total" INTEGER,
    "raw_results" TEXT,
    "delegation_id" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "model_benchmark_org_did_run_at_idx" ON "model_benchmark"("org_did", "run_at");

-- CreateIndex
CREATE INDEX "model_benchmark_org_did_model_id_run_at_idx" ON "model_benchmark"("org_did", "model_id", "run_at");
