-- The rate limit's fixed one-minute windows, shared by every process on the database (README:
-- scaling out): one row per key and window, counted by one INSERT … ON CONFLICT DO UPDATE.
-- UNLOGGED: a crash may empty it (a window's count restarts), and its writes skip the WAL.

-- CreateTable
CREATE UNLOGGED TABLE "rate_limit_window" (
    "key" TEXT NOT NULL,
    "window_start" BIGINT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "rate_limit_window_pkey" PRIMARY KEY ("key","window_start")
);

-- CreateIndex
CREATE INDEX "rate_limit_window_window_start_idx" ON "rate_limit_window"("window_start");
