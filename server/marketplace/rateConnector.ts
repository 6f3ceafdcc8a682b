import type { z } from "zod";
import type { Db } from "../db/client";
import { domainError } from "../errors";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { connectorOrThrow } from "./catalogue";
import type { RatingRequest } from "./schemas";
import { ratingView } from "./ratingView";

/**
 * Rates a connector for the calling person (the acting DID: a member's passport in the console,
 * the key's organization for an API key): one rating per person and connector, so a second call
 * updates the first. Only an organization that really used the connector may rate it: at least
 * one successful invocation recorded for it; otherwise 403 saying so. Answers whether it created.
 */
export async function rateConnector(
  db: Db,
  principal: Principal,
  connectorId: string,
  body: z.output<typeof RatingRequest>,
): Promise<{ created: boolean; rating: ReturnType<typeof ratingView> }> {
  const connector = connectorOrThrow(connectorId).definition;
  const used = await db.connectorInvocation.findFirst({
    where: { orgDid: principal.orgDid, connectorId: connector.connector_id, status: "success" },
    select: { id: true },
  });
  if (!used) {
    throw domainError(
      "rating_requires_usage",
      `Your organization has no successful invocation of ${connector.name} yet; ratings come only from organizations that used the connector.`,
      { connector_id: connector.connector_id },
    );
  }
  const displayName = await displayNameOf(db, principal);
  const existing = await db.connectorRating.findUnique({
    where: { connectorId_userId: { connectorId: connector.connector_id, userId: principal.actorDid } },
  });
  const reviewText = body.review_text ? body.review_text : null;
  const row = existing
    ? await db.connectorRating.update({
        where: { id: existing.id },
        data: { rating: body.rating, reviewText, displayName, orgDid: principal.orgDid },
      })
    : await db.connectorRating.create({
        data: {
          id: newId("rat"),
          connectorId: connector.connector_id,
          orgDid: principal.orgDid,
          userId: principal.actorDid,
          displayName,
          rating: body.rating,
          reviewText,
        },
      });
  return { created: !existing, rating: ratingView(row) };
}

/** The name a rating shows: the member's, else the passport's, else the organization's. */
async function displayNameOf(db: Db, principal: Principal): Promise<string> {
  const member = await db.member.findUnique({
    where: { passportDid: principal.actorDid },
    select: { displayName: true },
  });
  if (member) return member.displayName;
  const passport = await db.passport.findUnique({ where: { did: principal.actorDid }, select: { name: true } });
  if (passport) return passport.name;
  const org = await db.organization.findUnique({ where: { orgDid: principal.orgDid }, select: { name: true } });
  return org?.name ?? principal.actorDid;
}
