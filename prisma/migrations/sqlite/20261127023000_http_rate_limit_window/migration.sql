-- The rate limit's shared windows (PostgreSQL's, for several processes). SQLite serves one
-- process, which counts in memory (server/http/rateLimit.ts): the table stays empty here, kept so
-- both engines have the same schema.

-- CreateTable
CREATE TABLE "rate_limit_window" (
    "key" TEXT NOT NULL,
    "window_start" BIGINT NOT NULL,
    "count" INTEGER NOT NULL,

    PRIMARY KEY ("key", "window_start")
);

-- CreateIndex
CREATE INDEX "rate_limit_window_window_start_idx" ON "rate_limit_window"("window_start");
