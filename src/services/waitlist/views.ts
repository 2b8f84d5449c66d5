/**
 * What the waitlist serves, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape). Routes, webhook payloads and the public routes all go through these.
 */
import type { Static } from "@sinclair/typebox";
import type * as S from "./schemas";
import { parseWaitlistSettings, type WaitlistSettings } from "./settings";
import type * as store from "./store";

export type WaitlistView = Static<typeof S.Waitlist>;
export type WorkspaceSettingsView = Static<typeof S.WorkspaceSettings>;
export type EntryView = Static<typeof S.Entry>;
/** The Auth invite of an approved entry. */
export type InviteView = Static<typeof S.Invite>;
export type PublicEntryView = Static<typeof S.PublicEntry>;
export type PublicWaitlistView = Static<typeof S.PublicWaitlist>;
export type PublicVariantView = NonNullable<PublicWaitlistView["variant"]>;
export type VariantView = Static<typeof S.Variant>;

export const waitlistView = (r: store.WaitlistRow): WaitlistView => ({
  id: r.id,
  workspace_id: r.workspace_id,
  workspace_slug: r.workspace_slug,
  slug: r.slug,
  display_name: r.display_name,
  description: r.description,
  status: r.status,
  settings: parseWaitlistSettings(r.settings),
  created_by: r.created_by,
  previous_workspace_slug: r.previous_workspace_slug,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** A workspace without a settings row reads as every field null (updated_at too). */
export const settingsView = (workspaceId: string, r: store.SettingsRow | null): WorkspaceSettingsView => ({
  workspace_id: workspaceId,
  default_sender_domain_id: r?.default_sender_domain_id ?? null,
  default_auth_app_slug: r?.default_auth_app_slug ?? null,
  brand_name: r?.brand_name ?? null,
  brand_logo_url: r?.brand_logo_url ?? null,
  primary_color: r?.primary_color ?? null,
  notifications_via_mail: !!r?.notifications_via_mail,
  default_sender_address: r?.default_sender_address ?? null,
  welcome_template_name: r?.welcome_template_name ?? null,
  approved_template_name: r?.approved_template_name ?? null,
  rejected_template_name: r?.rejected_template_name ?? null,
  updated_at: r?.updated_at ?? null,
});

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

/** The admin view of an entry; `position` is shown while it is pending. */
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

/** What the public sign-up answers: `referralOrigin` is the origin the link points at (null: no link). */
export const publicEntryView = (r: store.EntryRow, s: WaitlistSettings, position: number | null, referralOrigin: string | null): PublicEntryView => ({
  id: r.id,
  status: r.status,
  position,
  referral_code: r.referral_code,
  referral_link: referralOrigin ? `${referralOrigin}/?ref=${encodeURIComponent(r.referral_code)}` : null,
  referral_count: Number(r.referral_count),
  confirmation_message: s.confirmation_message,
});

/** The public page's configuration but its per-request parts (variant, sign-up count), cached by public.ts. */
export const publicWaitlistBase = (w: store.WaitlistRow, s: WaitlistSettings, ws: store.SettingsRow | null): Omit<PublicWaitlistView, "variant" | "signup_count"> => ({
  workspace_slug: w.workspace_slug,
  slug: w.slug,
  display_name: w.display_name,
  description: w.description,
  status: w.status,
  brand_name: ws?.brand_name ?? null,
  brand_logo_url: ws?.brand_logo_url ?? null,
  primary_color: ws?.primary_color ?? null,
  custom_fields: s.custom_fields,
  confirmation_message: s.confirmation_message,
  max_entries: s.max_entries,
});

/** The variant a public page shows (the copy, not its weight). */
export const publicVariantView = (v: store.VariantRow): PublicVariantView => ({ id: v.id, name: v.name, display_name: v.display_name, description: v.description, cta_text: v.cta_text });

export const variantView = (r: store.VariantRow): VariantView => ({ ...r, weight: Number(r.weight), active: !!r.active });

export interface ClientInfo {
  ip: string | null;
  origin: string | null;
  referer: string | null;
}
