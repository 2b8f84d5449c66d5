/**
 * Webhook events of the card board (tack): the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts). With the board rather than at the service's root:
 * the events carry the board's records (schemas.ts) and the board's services emit them
 * through the context typed here, so a root file would sit on both sides of board/.
 */
import type { ModuleContext } from "../../../kernel/module";
import { Type } from "@sinclair/typebox";
import { defineWebhookProduct, FieldChanges, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../../kernel/webhooks";
import { Card, Comment, List, Project } from "./schemas";

const card = (over: Record<string, unknown> = {}) => ({
  id: "card_0192f3b27d1e7f0a8c44",
  workspace_id: "ws_0192f3a8b1c27d3e9f10",
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
  archived_at: null,
  created_at: T0,
  updated_at: T0,
  ...over,
});

const list = (over: Record<string, unknown> = {}) => ({
  id: "list_0192f3aa11c47e5d93b0",
  project_id: "proj_0192f3a9c0de7b11a2f7",
  name: "todo",
  display_name: "To do",
  position: 0,
  created_at: T0,
  updated_at: T0,
  ...over,
});

const project = (over: Record<string, unknown> = {}) => ({
  id: "proj_0192f3a9c0de7b11a2f7",
  workspace_id: "ws_0192f3a8b1c27d3e9f10",
  name: "web",
  display_name: "Website",
  status: "active",
  lists: [list()],
  archived_at: null,
  created_at: T0,
  updated_at: T0,
  ...over,
});

/** actor_id: the API key that made the change. */
const actor = { actor_id: "0192f0c5-a1b2-7c3d-8e4f-5a6b7c8d9e0f" };

/** Every board event names the API key that made the change. */
const ActorId = { actor_id: Type.String({ description: "The API key that made the change" }) };
const CardEvent = Type.Object({ ...Card.properties, ...ActorId });
const CardChanged = Type.Object({ ...Card.properties, changes: FieldChanges, ...ActorId });
const ListEvent = Type.Object({ ...List.properties, ...ActorId });
const ProjectEvent = Type.Object({ ...Project.properties, ...ActorId });

const EVENTS = [
  { type: "card.created",
    data: CardEvent, description: "A card was created on a list.", example: { ...card(), ...actor } },
  {
    type: "card.updated",
    data: CardChanged,
    description: "A card's title, body, priority, assignees, labels, due date or metadata changed (changes: {field: {from, to}}).",
    example: { ...card({ title: "Ship the billing page (v2)", updated_at: T1 }), changes: { title: { from: "Ship the billing page", to: "Ship the billing page (v2)" } }, ...actor },
  },
  {
    type: "card.moved",
    data: Type.Object({
      ...Card.properties,
      from_list: Type.String(),
      to_list: Type.String(),
      from_position: Type.Integer(),
      to_position: Type.Integer(),
      changes: FieldChanges,
      ...ActorId,
    }),
    description: "A card moved to another list or position (from_list, to_list, from_position, to_position).",
    example: {
      ...card({ list_id: "list_0192f3aa5e9f7c028d61", position: 3, updated_at: T1 }),
      from_list: "list_0192f3aa11c47e5d93b0",
      to_list: "list_0192f3aa5e9f7c028d61",
      from_position: 0,
      to_position: 3,
      changes: { position: { from: 0, to: 3 }, list_id: { from: "list_0192f3aa11c47e5d93b0", to: "list_0192f3aa5e9f7c028d61" } },
      ...actor,
    },
  },
  { type: "card.completed",
    data: CardEvent, description: "A card was marked complete (completed_at set).", example: { ...card({ completed_at: T1, updated_at: T1 }), ...actor } },
  { type: "card.reopened",
    data: CardEvent, description: "A completed card was reopened (completed_at cleared).", example: { ...card({ updated_at: T1 }), ...actor } },
  { type: "card.archived",
    data: CardEvent, description: "A card was archived (DELETE; archived_at set).", example: { ...card({ archived_at: T1, updated_at: T1 }), ...actor } },
  {
    type: "comment.created",
    data: Type.Object({ ...Comment.properties, project_id: Type.String(), ...ActorId }),
    description: "A comment was added to a card.",
    example: { id: "cmt_0192f3c0a4d97e21b6f3", card_id: "card_0192f3b27d1e7f0a8c44", project_id: "proj_0192f3a9c0de7b11a2f7", author_id: actor.actor_id, body: "Blocked on the tax API key.", created_at: T1, ...actor },
  },
  { type: "list.created",
    data: ListEvent, description: "A list was added to a project.", example: { ...list(), ...actor } },
  { type: "list.updated",
    data: Type.Object({ ...List.properties, changes: FieldChanges, ...ActorId }), description: "A list was renamed or repositioned (changes: {field: {from, to}}).", example: { ...list({ position: 2, updated_at: T1 }), changes: { position: { from: 0, to: 2 } }, ...actor } },
  { type: "list.deleted",
    data: Type.Object({ id: Type.String(), project_id: Type.String(), name: Type.String(), deleted_at: Type.String(), ...ActorId }), description: "An empty list was deleted.", example: { id: "list_0192f3aa11c47e5d93b0", project_id: "proj_0192f3a9c0de7b11a2f7", name: "todo", deleted_at: T1, ...actor } },
  { type: "project.created",
    data: ProjectEvent, description: "A project was created (with its lists).", example: { ...project(), ...actor } },
  { type: "project.archived",
    data: ProjectEvent, description: "A project was archived (DELETE).", example: { ...project({ status: "archived", archived_at: T1, updated_at: T1 }), ...actor } },
] as const;

export const TACK_WEBHOOKS = defineWebhookProduct({
  product: "tack",
  label: "Card board",
  legacyHeader: "x-tack-signature",
  events: EVENTS,
});

/** The module's context with its emit typed by these declarations. */
export type TackContext = ModuleContext<typeof TACK_WEBHOOKS>;
