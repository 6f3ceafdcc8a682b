-- Step-ups belong to the session (issue 26 items 8 and 9): the passkey assertion made in a console
-- session, and the person who minted a delegation in one.
ALTER TABLE "delegation" ADD COLUMN "passkey_asserted_at" DATETIME;
ALTER TABLE "delegation" ADD COLUMN "minted_by_did" TEXT;
