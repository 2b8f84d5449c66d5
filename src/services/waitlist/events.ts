/**
 * Webhook events of the waitlist service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { Type } from "@sinclair/typebox";
import { defineWebhookProduct, FieldChanges, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks";
import type { ModuleContext } from "../../kernel/module";
import { Entry, Waitlist, WaitlistSettingsModel } from "./schemas";

const entry = (over: Record<string, unknown> = {}) => ({
  id: "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61",
  waitlist_id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  email: "ada@example.com",
  name: "Ada Lovelace",
  interest: "Team plan",
  referrer: "https://news.example.org/launch",
  referral_code: "ADA7K2",
  referral_count: 2,
  referred_by_entry_id: null,
  position: 42,
  status: "pending",
  invited_at: null,
  invited_to_app_slug: null,
  metadata: { utm_source: "newsletter" },
  custom_fields: {},
  utm: { source: "newsletter", medium: null, campaign: null },
  variant_id: null,
  invite: null,
  created_at: T0,
  updated_at: T0,
  ...over,
});

const invite = (over: Record<string, unknown>) => ({ status: "sent", app_slug: "acme-app", attempts: 1, error: null, updated_at: T1, ...over });

const EntryChanged = Type.Object({ ...Entry.properties, changes: FieldChanges });

const EVENTS = [
  { type: "entry.created",
    data: Entry, description: "Someone joined a waitlist (status pending).", example: entry() },
  {
    type: "entry.updated",
    data: EntryChanged,
    description: "A waitlist entry's fields, position or referral count changed.",
    example: { ...entry({ position: 17, referral_count: 3, updated_at: T1 }), changes: { position: { from: 42, to: 17 }, referral_count: { from: 2, to: 3 } } },
  },
  {
    type: "entry.approved",
    data: Entry,
    description: "A waitlist entry was approved. With an Auth App in the workspace's waitlist settings, its invite is pending (entry.invited or entry.invite_failed follows).",
    example: entry({ status: "approved", position: null, invite: invite({ status: "pending", attempts: 0 }), updated_at: T1 }),
  },
  {
    type: "entry.rejected",
    data: Entry,
    description: "A waitlist entry was rejected.",
    example: entry({ status: "rejected", position: null, updated_at: T1 }),
  },
  {
    type: "entry.invited",
    data: Entry,
    description: "An approved entry was sent an invitation to an Auth app.",
    example: entry({ status: "approved", position: null, invited_at: T1, invited_to_app_slug: "acme-app", invite: invite({ status: "sent" }), updated_at: T1 }),
  },
  {
    type: "entry.invite_failed",
    data: Entry,
    description:
      "The Auth invite of an approved entry was given up: at once when the Auth App refused it (invite.error.code as the Auth API gives it, e.g. EMAIL_TAKEN: " +
      "the email is already a user of the App), after 8 attempts for other failures. The approval stands; no approved mail is sent.",
    example: entry({
      status: "approved",
      position: null,
      invite: invite({ status: "failed", error: { code: "EMAIL_TAKEN", message: "A user with this email already exists" } }),
      updated_at: T1,
    }),
  },
  {
    type: "entry.deleted",
    data: Type.Object({ id: Type.String(), waitlist_id: Type.String(), email: Type.String(), deleted_at: Type.String() }),
    description: "A waitlist entry was deleted.",
    example: { id: "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61", waitlist_id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25", email: "ada@example.com", deleted_at: T1 },
  },
  {
    type: "waitlist.status_changed",
    data: Type.Object({ ...Waitlist.properties, settings: Type.Partial(WaitlistSettingsModel), previous_status: Type.String() }),
    description: "A waitlist's status changed (draft, open, paused, closed).",
    example: {
      id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25",
      workspace_id: "ws_0192f0c4e5b87d21a9c3",
      workspace_slug: "acme",
      slug: "beta",
      display_name: "Acme beta",
      description: null,
      status: "open",
      previous_status: "draft",
      settings: { max_entries: null, approval_required: true, custom_fields: [], confirmation_message: null, referral_boost: 1, allowed_origins: ["*"] },
      created_by: "api_key:key_0192f0c4",
      previous_workspace_slug: null,
      created_at: T0,
      updated_at: T1,
    },
  },
] as const;

export const WAITLIST_WEBHOOKS = defineWebhookProduct({
  product: "waitlist",
  label: "Waitlist",
  legacyHeader: "x-waitlist-signature",
  events: EVENTS,
});

/** The waitlist module's context: its emit typed by these declarations. */
export type WaitlistContext = ModuleContext<typeof WAITLIST_WEBHOOKS>;
