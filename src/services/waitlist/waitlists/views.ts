/**
 * What the waitlist serves of waitlists, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type * as S from "../schemas";
import { parseWaitlistSettings } from "../settings";
import type { SettingsRow, WaitlistRow } from "./store";

export type WaitlistView = Static<typeof S.Waitlist>;
export type WorkspaceSettingsView = Static<typeof S.WorkspaceSettings>;

export const waitlistView = (r: WaitlistRow): WaitlistView => ({
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
export const settingsView = (workspaceId: string, r: SettingsRow | null): WorkspaceSettingsView => ({
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
