-- Foreign keys where the models relate (see prisma/schema.prisma). Existing rows that break a
-- key make the migration fail: nothing in these tables is ever deleted, so none should.

-- AddForeignKey
ALTER TABLE "organization" ADD CONSTRAINT "organization_parent_org_did_fkey" FOREIGN KEY ("parent_org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "passport" ADD CONSTRAINT "passport_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation" ADD CONSTRAINT "delegation_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation" ADD CONSTRAINT "delegation_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "delegation"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "revocation" ADD CONSTRAINT "revocation_delegation_id_fkey" FOREIGN KEY ("delegation_id") REFERENCES "delegation"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "revocation" ADD CONSTRAINT "revocation_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "member" ADD CONSTRAINT "member_passport_did_fkey" FOREIGN KEY ("passport_did") REFERENCES "passport"("did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "member" ADD CONSTRAINT "member_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webauthn_credential" ADD CONSTRAINT "webauthn_credential_passport_did_fkey" FOREIGN KEY ("passport_did") REFERENCES "passport"("did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invite" ADD CONSTRAINT "invite_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;
