-- RFC 9700 §4.7: a console-started authorization is bound to the browser that started it.
-- AlterTable
ALTER TABLE "connector_oauth_state" ADD COLUMN "browser_binding" TEXT;
