/** The shapes of an entry the waitlist shows: the admin view (entryView) and the public one. */
import type * as store from "./store";

export interface EntryView {
  id: string;
  waitlist_id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  interest: string | null;
  referrer: string | null;
  referral_code: string;
  referral_count: number;
  referred_by_entry_id: string | null;
  position: number | null;
  status: store.EntryStatus;
  invited_at: string | null;
  invited_to_app_slug: string | null;
  metadata: Record<string, unknown>;
  custom_fields: Record<string, unknown>;
  utm: { source: string | null; medium: string | null; campaign: string | null };
  variant_id: string | null;
  invite: InviteView | null;
  created_at: string;
  updated_at: string;
}

/** The Auth invite of an approved entry (schemas.ts Invite describes the fields). */
export interface InviteView {
  status: store.InviteStatus;
  app_slug: string | null;
  attempts: number;
  error: { code: string; message: string } | null;
  updated_at: string | null;
}

/** The invite columns of an entry that has none (a new entry). */
export const NO_INVITE = {
  invite_status: null, invite_app_slug: null, invite_attempts: 0, invite_error_code: null, invite_error_message: null, invite_updated_at: null,
} as const satisfies Partial<store.EntryRow>;

const inviteView = (r: store.EntryRow): InviteView | null =>
  r.invite_status === null
    ? null
    : {
        status: r.invite_status,
        app_slug: r.invite_app_slug,
        attempts: Number(r.invite_attempts),
        error: r.invite_error_code === null ? null : { code: r.invite_error_code, message: r.invite_error_message ?? "" },
        updated_at: r.invite_updated_at,
      };

export const entryView = (r: store.EntryRow, position: number | null): EntryView => ({
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

export interface ClientInfo {
  ip: string | null;
  origin: string | null;
  referer: string | null;
}

export interface PublicEntry {
  id: string;
  status: store.EntryStatus;
  position: number | null;
  referral_code: string;
  referral_link: string | null;
  referral_count: number;
  confirmation_message: string | null;
}

