-- Company sign-in over OpenID Connect (issue 20 item 8)
CREATE TABLE "oidc_identity" (
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "passport_did" TEXT NOT NULL,
    "email" TEXT,
    "role_removed_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_sign_in_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "oidc_identity_pkey" PRIMARY KEY ("issuer","subject")
);

-- CreateIndex
CREATE UNIQUE INDEX "oidc_identity_passport_did_key" ON "oidc_identity"("passport_did");
