/**
 * What the waitlist serves of the public page, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type * as S from "../schemas";
import type { WaitlistSettings } from "../settings";
import type { SettingsRow, WaitlistRow } from "../waitlists";

export type PublicWaitlistView = Static<typeof S.PublicWaitlist>;

/** The public page's configuration but its per-request parts (variant, sign-up count), cached by config.ts. */
export const publicWaitlistBase = (w: WaitlistRow, s: WaitlistSettings, ws: SettingsRow | null): Omit<PublicWaitlistView, "variant" | "signup_count"> => ({
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
