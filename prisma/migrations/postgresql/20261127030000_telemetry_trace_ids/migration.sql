-- Traces (issue 20 item 1): a record's trace id, and the trace context a queued job continues
ALTER TABLE "provenance_record" ADD COLUMN "trace_id" TEXT;
ALTER TABLE "job" ADD COLUMN "traceparent" TEXT;
