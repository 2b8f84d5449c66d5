/**
 * Webhook events of the card board (tack): the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../webhooks/catalogue";
import type { EventTypeInfo } from "../webhooks/types";

const card = (over: Record<string, unknown> = {}) => ({
  id: "card_0192f3b27d1e7f0a8c44",
  project_id: "proj_0192f3a9c0de7b11a2f7",
  list_id: "list_0192f3aa11c47e5d93b0",
  title: "Ship the billing page",
  body: "Stripe checkout plus **invoices** list.",
  priority: "high",
  position: 0,
  assignees: ["usr_0192f0c5a1b2"],
  labels: ["frontend"],
  due_at: "2026-11-15T17:00:00.000Z",
  completed_at: null,
  metadata: {},
  created_at: T0,
  updated_at: T0,
  ...over,
});

const EVENTS: EventTypeInfo[] = [
  { type: "card.created", description: "A card was created on a list.", example: { ...card(), actor_id: "usr_0192f0c5a1b2" } },
  {
    type: "card.updated",
    description: "A card's title, body, priority, assignees, labels, due date or metadata changed.",
    example: { ...card({ title: "Ship the billing page (v2)", updated_at: T1 }), changes: { title: { from: "Ship the billing page", to: "Ship the billing page (v2)" } }, actor_id: "usr_0192f0c5a1b2" },
  },
  {
    type: "card.moved",
    description: "A card moved to another list or position.",
    example: {
      ...card({ list_id: "list_0192f3aa5e9f7c028d61", position: 3, updated_at: T1 }),
      changes: { list_id: { from: "list_0192f3aa11c47e5d93b0", to: "list_0192f3aa5e9f7c028d61" }, position: { from: 0, to: 3 } },
      actor_id: "usr_0192f0c5a1b2",
    },
  },
  { type: "card.completed", description: "A card was marked complete (completed_at set).", example: { ...card({ completed_at: T1, updated_at: T1 }), actor_id: "usr_0192f0c5a1b2" } },
  { type: "card.deleted", description: "A card was deleted.", example: { id: "card_0192f3b27d1e7f0a8c44", project_id: "proj_0192f3a9c0de7b11a2f7", list_id: "list_0192f3aa11c47e5d93b0", actor_id: "usr_0192f0c5a1b2", deleted_at: T1 } },
  {
    type: "comment.created",
    description: "A comment was added to a card.",
    example: { id: "cmt_0192f3c0a4d97e21b6f3", card_id: "card_0192f3b27d1e7f0a8c44", project_id: "proj_0192f3a9c0de7b11a2f7", author_id: "usr_0192f0c5a1b2", body: "Blocked on the tax API key.", created_at: T1 },
  },
];

export const TACK_WEBHOOKS = defineWebhookProduct({
  product: "tack",
  label: "Card board",
  legacyHeader: "x-tack-signature",
  events: EVENTS,
});
