/**
 * What the waitlist serves of entries (the admin's and the public sign-up's), one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type * as S from "../schemas";
import type { WaitlistSettings } from "../settings";
import type { EntryRow } from "./store";

export type EntryView = Static<typeof S.Entry>;
/** The Auth invite of an approved entry. */
export type InviteView = Static<typeof S.Invite>;
export type PublicEntryView = Static<typeof S.PublicEntry>;

/** The invite columns of an entry that has none (a new entry). */
export const NO_INVITE = {
  invite_status: null, invite_app_slug: null, invite_attempts: 0, invite_error_code: null, invite_error_message: null, invite_updated_at: null,
} as const satisfies Partial<EntryRow>;

const inviteView = (r: EntryRow): InviteView | null =>
  r.invite_status === null
    ? null
    : {
        status: r.invite_status,
        app_slug: r.invite_app_slug,
        attempts: Number(r.invite_attempts),
        error: r.invite_error_code === null ? null : { code: r.invite_error_code, message: r.invite_error_message ?? "" },
        updated_at: r.invite_updated_at,
      };

/** The admin view of an entry; `position` is shown while it is pending. */
export const entryView = (r: EntryRow, position: number | null): EntryView => ({
  id: r.id,
  waitlist_id: r.waitlist_id,
  workspace_id: r.workspace_id,
  email: r.email,
  name: r.name,
  interest: r.interest,
  referrer: r.referrer,
  referral_code: r.referral_code,
  referral_count: Number(r.referral_count),
  referred_by_entry_id: r.referred_by_entry_id,
  position: r.status === "pending" ? position : null,
  status: r.status,
  invited_at: r.invited_at,
  invited_to_app_slug: r.invited_to_app_slug,
  metadata: JSON.parse(r.metadata),
  custom_fields: JSON.parse(r.custom_fields),
  utm: { source: r.utm_source, medium: r.utm_medium, campaign: r.utm_campaign },
  variant_id: r.variant_id,
  invite: inviteView(r),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** What the public sign-up answers: `referralOrigin` is the origin the link points at (null: no link). */
export const publicEntryView = (r: EntryRow, s: WaitlistSettings, position: number | null, referralOrigin: string | null): PublicEntryView => ({
  id: r.id,
  status: r.status,
  position,
  referral_code: r.referral_code,
  referral_link: referralOrigin ? `${referralOrigin}/?ref=${encodeURIComponent(r.referral_code)}` : null,
  referral_count: Number(r.referral_count),
  confirmation_message: s.confirmation_message,
});

export interface ClientInfo {
  ip: string | null;
  origin: string | null;
  referer: string | null;
}
