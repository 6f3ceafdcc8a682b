import { z } from "zod";
import { ROLES } from "./roles";

/** The console's people: plain zod, no node-only import (console forms use these). */
export const Role = z.enum(ROLES);

export const Me = z.object({
  did: z.string(),
  org_did: z.string(),
  org_name: z.string(),
  role: z.string().nullable(),
  display_name: z.string().nullable(),
  capabilities: z.array(z.string()),
  session_expires_at: z.string(),
});

export const MemberView = z.object({
  did: z.string(),
  display_name: z.string(),
  role: z.string(),
  status: z.string(),
  invited_by: z.string().nullable(),
  created_at: z.string(),
});

export const InviteRequest = z.object({ role: Role, hours: z.number().int().min(1).max(720).default(72) }).strict();

export const InviteLink = z.object({ id: z.string(), link: z.string(), role: Role, expires_at: z.string() });

export const RevokeMemberRequest = z.object({ did: z.string().min(8).max(512) }).strict();

export const MemberRevoked = z.object({ did: z.string(), status: z.string() });
