/** TypeBox models of the waitlist service (routes and OpenAPI). */
import { t } from "../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../access/schemas";
import { DAY_PATTERN } from "./days";
import { BULK_MAX } from "./limits";
import { UUID_PATTERN, Uuid } from "../../access/schemas";
export { UUID_PATTERN, Uuid };

export { ErrorBody, Pagination };

const Str = t.Nullable(t.String());

// Ids and slugs as the routes take them: a malformed one is 400 VALIDATION_ERROR naming the
// field before anything is looked up (a well-formed one that names nothing is then 404).
// Every waitlist row id is a UUID (any case; stored lower-case).

/** The public routes' slugs, matched ignoring case: a workspace's (platform rule, 1-63) and a waitlist's (2-63). */
const WorkspaceSlug = t.String({ pattern: "^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$", maxLength: 63, description: "The workspace's slug (or the one it had before its last rename)" });
const WaitlistSlug = t.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,61}[A-Za-z0-9]$", description: "The waitlist's slug" });

export const WorkspaceParams = t.Object({ workspace_id: Uuid("The workspace's id") });
export const WaitlistParams = t.Object({ workspace_id: Uuid("The workspace's id"), waitlist_id: Uuid() });
export const EntryParams = t.Object({ workspace_id: Uuid("The workspace's id"), waitlist_id: Uuid(), entry_id: Uuid() });
export const VariantParams = t.Object({ workspace_id: Uuid("The workspace's id"), waitlist_id: Uuid(), variant_id: Uuid() });
export const PublicParams = t.Object({ workspace_slug: WorkspaceSlug, waitlist_slug: WaitlistSlug });

export const WorkspaceSettings = t.Object({
  workspace_id: t.String(),
  default_sender_domain_id: t.Nullable(t.String({ description: "Active sending mail domain of the workspace" })),
  default_auth_app_slug: t.Nullable(t.String({ description: "Auth App approved entries are invited into" })),
  brand_name: Str,
  brand_logo_url: Str,
  primary_color: t.Nullable(t.String({ description: "#RRGGBB" })),
  notifications_via_mail: t.Boolean(),
  default_sender_address: Str,
  welcome_template_name: Str,
  approved_template_name: Str,
  rejected_template_name: Str,
  updated_at: t.Nullable(t.String({ description: "null while no explicit settings row exists" })),
});

/** Checked in waitlists/workspace-settings.ts (one detail per problem; unknown and read-only keys named too, so they pass the schema). */
export const WorkspaceSettingsPut = t.Object(
  { default_sender_domain_id: t.Optional(t.Nullable(Uuid("An active sending mail domain of the workspace; null clears"))) },
  {
    additionalProperties: t.Unknown(),
    description:
      "Any of default_sender_domain_id, default_sender_address, default_auth_app_slug, brand_name, brand_logo_url, primary_color, notifications_via_mail, " +
      "welcome_template_name, approved_template_name, rejected_template_name. Absent fields keep their value; null clears one.",
  },
);

const CustomField = t.Object({
  name: t.String(),
  type: t.String({ description: "text | number | select | checkbox" }),
  required: t.Boolean(),
  options: t.Nullable(t.Array(t.String())),
});

export const WaitlistSettingsModel = t.Object({
  max_entries: t.Nullable(t.Integer({ description: "null: no limit" })),
  approval_required: t.Boolean({ description: "false: sign-ups are approved at once" }),
  custom_fields: t.Array(CustomField),
  confirmation_message: Str,
  referral_boost: t.Integer({ description: "Places gained per counted referral (default 1)" }),
  allowed_origins: t.Array(t.String(), { description: 'Browser origins allowed on the public routes; ["*"] (default) any' }),
  block_disposable: t.Boolean(),
  show_signup_count: t.Boolean(),
  signups_per_minute: t.Integer({ description: "Per-waitlist sign-up rate limit" }),
  invite_accept_url: t.Nullable(t.String({ description: "Page that accepts Auth invites (approved mail's invite_link)" })),
});

const SettingsInput = JsonObject({ description: "Any subset of the waitlist settings keys; merged shallowly; null resets a key" });

export const Waitlist = t.Object({
  id: t.String(),
  workspace_id: t.String(),
  workspace_slug: t.String(),
  slug: t.String(),
  display_name: t.String(),
  description: Str,
  status: t.String({ description: "draft | open | paused | closed" }),
  settings: WaitlistSettingsModel,
  created_by: Str,
  previous_workspace_slug: Str,
  created_at: t.String(),
  updated_at: t.String(),
});

export const WaitlistList = t.Object({ data: t.Array(Waitlist), pagination: Pagination });
export const WaitlistCreate = t.Object({
  slug: t.String({ description: "2-63 of a-z, 0-9 and hyphens; unique in the workspace" }),
  display_name: t.String({ description: "1-200 characters" }),
  description: t.Optional(Str),
  settings: t.Optional(SettingsInput),
});
export const WaitlistPatch = t.Object({ display_name: t.Optional(t.String()), description: t.Optional(Str), settings: t.Optional(SettingsInput) });
export const StatusBody = t.Object({ status: t.String({ description: "draft | open | paused | closed" }) });
export const ListQuery = t.Object({ limit: t.Optional(t.QueryInteger()), cursor: t.Optional(t.String()), status: t.Optional(t.String()) });

export const Invite = t.Object(
  {
    status: t.Union([t.Literal("pending"), t.Literal("sent"), t.Literal("failed")], {
      description:
        "pending: being created (retried with backoff after a temporary failure; error then holds the last one) | " +
        "sent: the Auth App holds a single-use invite for the email (invited_at; the code goes out in the approved mail when notifications_via_mail) | " +
        "failed: given up, see error (at once when the Auth App refuses, e.g. EMAIL_TAKEN; after 8 attempts otherwise); entry.invite_failed was emitted",
    }),
    app_slug: t.Nullable(t.String({ description: "The Auth App the invite is for (the workspace's default_auth_app_slug at approval)" })),
    attempts: t.Integer({ description: "Attempts made so far" }),
    error: t.Nullable(
      t.Object(
        {
          code: t.String({ description: "The refusal's code as the Auth API gives it (e.g. EMAIL_TAKEN: the email is already a user of the App), AUTH_APP_NOT_FOUND, AUTH_APP_NOT_SET, INTERNAL_ERROR; INVITE_FAILED for failures recorded before this field existed" }),
          message: t.String(),
        },
        { description: "Why the last attempt failed; null once sent" },
      ),
    ),
    updated_at: t.Nullable(t.String()),
  },
  { description: "The Auth invite of an approved entry when the workspace's waitlist settings name an Auth App (default_auth_app_slug); null otherwise" },
);

export const Entry = t.Object({
  id: t.String(),
  waitlist_id: t.String(),
  workspace_id: t.String(),
  email: t.String(),
  name: Str,
  interest: Str,
  referrer: Str,
  referral_code: t.String(),
  referral_count: t.Integer(),
  referred_by_entry_id: Str,
  position: t.Nullable(t.Integer({ description: "Place in the queue (pending entries); null once decided" })),
  status: t.String({ description: "pending | approved | rejected" }),
  invited_at: Str,
  invited_to_app_slug: Str,
  metadata: JsonObject(),
  custom_fields: JsonObject(),
  utm: t.Object({ source: Str, medium: Str, campaign: Str }),
  variant_id: Str,
  invite: t.Nullable(Invite),
  created_at: t.String(),
  updated_at: t.String(),
});
export const EntryList = t.Object({ data: t.Array(Entry), pagination: Pagination });
export const EntryListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String()),
  status: t.Optional(t.String({ description: "pending | approved | rejected" })),
  q: t.Optional(t.String({ description: "Case-insensitive substring of email or name" })),
  sort: t.Optional(t.String({ description: "position (default; decided entries after the queue) | created_at (oldest first)" })),
});
export const EntryCount = t.Object({ total: t.Integer(), pending: t.Integer(), approved: t.Integer(), rejected: t.Integer() });
export const EntryPatch = t.Object({
  name: t.Optional(Str),
  interest: t.Optional(Str),
  metadata: t.Optional(JsonObject({ description: "Merged into the entry's metadata; a null value removes a key" })),
});
export const BulkBody = t.Object({
  action: t.String({ description: "approve | reject" }),
  entry_ids: t.Optional(t.Array(Uuid(), { minItems: 1, maxItems: BULK_MAX, description: `1-${BULK_MAX} entry ids` })),
  top: t.Optional(t.Integer({ description: "The first N (1-500) pending entries by position" })),
});
export const BulkResult = t.Object({ action: t.String(), count: t.Integer(), data: t.Array(Entry) });

export const PublicWaitlist = t.Object({
  workspace_slug: t.String(),
  slug: t.String(),
  display_name: t.String(),
  description: Str,
  status: t.String(),
  brand_name: Str,
  brand_logo_url: Str,
  primary_color: Str,
  custom_fields: t.Array(CustomField),
  confirmation_message: Str,
  max_entries: t.Nullable(t.Integer()),
  signup_count: t.Nullable(t.Integer({ description: "Set when settings.show_signup_count" })),
  variant: t.Nullable(t.Object({ id: t.String(), name: t.String(), display_name: Str, description: Str, cta_text: Str })),
});
export const PublicQuery = t.Object({ visitor: t.Optional(t.String({ maxLength: 200, description: "Visitor token for a stable variant" })) });

export const SignupBody = t.Object({
  email: t.String({ description: "Required; at most 254 characters" }),
  name: t.Optional(Str),
  interest: t.Optional(Str),
  referral_code: t.Optional(Str),
  custom_fields: t.Optional(JsonObject()),
  utm: t.Optional(t.Object({ source: t.Optional(Str), medium: t.Optional(Str), campaign: t.Optional(Str) })),
  variant_id: t.Optional(t.Nullable(t.String({ pattern: `^$|${UUID_PATTERN}`, description: "The variant the page showed (a UUID); empty or null: none" }))),
  website: t.Optional(t.Unknown({ description: "Honeypot: leave empty (hidden field)" })),
});
export const PublicEntry = t.Object({
  id: t.String(),
  status: t.String(),
  position: t.Nullable(t.Integer()),
  referral_code: t.String(),
  referral_link: t.Nullable(t.String({ description: "The sign-up page's origin with ?ref=<code>" })),
  referral_count: t.Integer(),
  confirmation_message: Str,
});

export const Variant = t.Object({
  id: t.String(),
  waitlist_id: t.String(),
  name: t.String(),
  display_name: Str,
  description: Str,
  cta_text: Str,
  weight: t.Integer({ description: "0-1000; share of visitors among active variants" }),
  active: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});
export const VariantList = t.Object({ data: t.Array(Variant) });
const variantFields = {
  display_name: t.Optional(Str),
  description: t.Optional(Str),
  cta_text: t.Optional(Str),
  weight: t.Optional(t.Integer({ description: "0-1000, default 1" })),
  active: t.Optional(t.Boolean()),
};
export const VariantCreate = t.Object({ name: t.String({ description: "1-40 of a-z, 0-9, _ and -; unique in the waitlist" }), ...variantFields });
export const VariantPatch = t.Object({ name: t.Optional(t.String()), ...variantFields });

/** A calendar day: the pattern here, the month lengths (no 2026-02-30) in the handler (days.ts). */
const Day = (description: string) => t.String({ format: "date", pattern: DAY_PATTERN, description: `A calendar date YYYY-MM-DD (UTC), years 0001-9999; ${description}` });
export const AnalyticsQuery = t.Object({
  since: t.Optional(Day("inclusive; default until - 29 days")),
  until: t.Optional(Day("inclusive; default today; range at most 366 days")),
});
const Rate = t.Nullable(t.Number({ description: "sign-ups / views; null without views" }));
export const Analytics = t.Object({
  since: t.String(),
  until: t.String(),
  totals: t.Object({ signups: t.Integer(), approvals: t.Integer(), rejections: t.Integer(), referrals: t.Integer(), views: t.Integer(), conversion_rate: Rate }),
  daily: t.Array(t.Object({ date: t.String(), signups: t.Integer(), approvals: t.Integer(), rejections: t.Integer(), referrals: t.Integer(), views: t.Integer() })),
  variants: t.Array(t.Object({ variant_id: Str, name: Str, views: t.Integer(), signups: t.Integer(), conversion_rate: Rate }), {
    description: "Per variant. Sign-ups that name no variant count for the default one (the oldest: the one every waitlist starts with), as its page is what they were shown; variant_id null only when no variant is left.",
  }),
  top_referrers: t.Array(t.Object({ entry_id: t.String(), email: t.String(), name: Str, referral_code: t.String(), referral_count: t.Integer() })),
  utm_sources: t.Array(t.Object({ source: Str, signups: t.Integer() })),
});
