/** TypeBox models of the card board's routes (requests, records, offset pages). */
import type { TSchema } from "elysia";
import { prefixedIdPattern } from "../../../core/ids";
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject } from "../../../access/schemas";
import { NAME_RE, PRIORITIES } from "./validate";

export { ErrorBody };

const Metadata = JsonObject({ description: "JSON object, at most 16 KB" });
const Name = t.String({ description: "Slug: 1-64 of a-z, 0-9 and '-', unique in its parent (409 NAME_TAKEN)" });
const DisplayName = t.String({ description: "1-200 characters; default: the name" });
const Position = t.Integer({ description: "0-based target index; larger values mean the end; the others shift" });
const Priority = t.Union([t.Literal("urgent"), t.Literal("high"), t.Literal("medium"), t.Literal("low"), t.Literal("none")], { description: "default none" });
const Iso = (description: string) => t.Nullable(t.String({ description }));

export const OffsetPagination = t.Object({ total: t.Integer(), limit: t.Integer(), offset: t.Integer(), has_more: t.Boolean() });
export const PageOf = <T extends TSchema>(item: T) => t.Object({ data: t.Array(item), pagination: OffsetPagination });
export const PageQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 50" })),
  offset: t.Optional(t.QueryInteger({ description: "default 0" })),
});
export const ArchivedQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 50" })),
  offset: t.Optional(t.QueryInteger({ description: "default 0" })),
  include_archived: t.Optional(t.Boolean({ description: "true: archived items too" })),
});

// ------------------------------------------------------------------ ids and names

/**
 * What a {workspace}, {project}, {list}, {label} or {card_id} may be, checked before any
 * lookup (malformed: 400 naming the parameter; well-formed but unknown: 404). Ids are
 * core/ids prefixedId handles (the prefix, "_" and 32 hex digits); names are slugs (no
 * underscore), so the two never collide. Board workspaces moved from the platform scope
 * (migration 0061) have ws_ and the platform UUID's 32 hex digits, the same shape.
 */
const NAME = NAME_RE.source.slice(1, -1);
const idOf = (prefix: string) => prefixedIdPattern(prefix).slice(1, -1);
export const refPattern = (prefix: string) => `^(${idOf(prefix)}|${NAME})$`;
const Ref = (prefix: string, what: string) => t.String({ pattern: refPattern(prefix), description: `The ${what}'s name (a slug) or id (${prefix}_...)` });
export const WorkspaceRef = Ref("ws", "board workspace");
export const ProjectRef = Ref("proj", "project");
export const ListRef = Ref("list", "list");
export const LabelRef = Ref("lbl", "label");
export const CardId = t.String({ pattern: `^${idOf("card")}$`, description: "card_ followed by 32 hex digits" });

export const WorkspaceParams = t.Object({ workspace_id: WorkspaceRef });
export const ProjectParams = t.Object({ workspace_id: WorkspaceRef, project: ProjectRef });
export const ListParams = t.Object({ workspace_id: WorkspaceRef, project: ProjectRef, list: ListRef });
export const LabelParams = t.Object({ workspace_id: WorkspaceRef, label: LabelRef });
export const CardParams = t.Object({ workspace_id: WorkspaceRef, project: ProjectRef, card_id: CardId });

// ------------------------------------------------------------------ records

export const Workspace = t.Object({
  id: t.String({ description: "ws_..." }),
  name: t.String(),
  display_name: t.String(),
  metadata: Metadata,
  archived_at: Iso("null until archived (DELETE)"),
  created_at: t.String(),
  updated_at: t.String(),
});

export const List = t.Object({
  id: t.String({ description: "list_..." }),
  project_id: t.String(),
  name: t.String(),
  display_name: t.String(),
  position: t.Integer({ description: "0-based, contiguous within the project" }),
  created_at: t.String(),
  updated_at: t.String(),
});

export const Project = t.Object({
  id: t.String({ description: "proj_..." }),
  workspace_id: t.String(),
  name: t.String(),
  display_name: t.String(),
  status: t.Union([t.Literal("active"), t.Literal("archived")]),
  lists: t.Array(List, { description: "In position order" }),
  archived_at: Iso("null until archived"),
  created_at: t.String(),
  updated_at: t.String(),
});

export const Label = t.Object({
  id: t.String({ description: "lbl_..." }),
  workspace_id: t.String(),
  name: t.String(),
  color: t.String({ description: "#rrggbb" }),
  created_at: t.String(),
  updated_at: t.String(),
});

export const Card = t.Object({
  id: t.String({ description: "card_..." }),
  workspace_id: t.String(),
  project_id: t.String(),
  list_id: t.String(),
  title: t.String(),
  body: t.String({ description: "Markdown" }),
  priority: Priority,
  position: t.Integer({ description: "0-based, contiguous among the list's active cards" }),
  assignees: t.Array(t.String(), { description: "usr_... ids" }),
  labels: t.Array(t.String(), { description: "Label names, alphabetical" }),
  due_at: Iso("ISO 8601 or null"),
  completed_at: Iso("null until completed"),
  metadata: Metadata,
  archived_at: Iso("null until archived"),
  created_at: t.String(),
  updated_at: t.String(),
});

export const Comment = t.Object({
  id: t.String({ description: "cmt_..." }),
  card_id: t.String(),
  author_id: t.String({ description: "The API key that wrote it" }),
  body: t.String({ description: "Markdown" }),
  created_at: t.String(),
});

export const Activity = t.Object({
  id: t.String({ description: "act_..." }),
  project_id: t.String(),
  card_id: t.Nullable(t.String()),
  actor_id: t.String(),
  action: t.String({ description: "e.g. card.created, card.updated, card.moved, card.completed, card.reopened, card.archived, comment.created, project.*, list.*" }),
  changes: t.Record(t.String(), t.Object({ from: t.Unknown(), to: t.Unknown() })),
  timestamp: t.String(),
});

// ------------------------------------------------------------------ requests

export const WorkspaceCreate = t.Object({ name: Name, display_name: t.Optional(DisplayName), metadata: t.Optional(Metadata) });
export const WorkspacePatch = t.Object({ name: t.Optional(Name), display_name: t.Optional(DisplayName), metadata: t.Optional(Metadata) });
export const ProjectCreate = t.Object({
  name: Name,
  display_name: t.Optional(DisplayName),
  lists: t.Optional(t.Array(t.Object({ name: Name, display_name: t.Optional(DisplayName) }), { description: "Created with the project, in this order (at most 50)" })),
});
export const ProjectPatch = t.Object({ name: t.Optional(Name), display_name: t.Optional(DisplayName) });
export const ListCreate = t.Object({ name: Name, display_name: t.Optional(DisplayName), position: t.Optional(Position) });
export const ListPatch = t.Object({ name: t.Optional(Name), display_name: t.Optional(DisplayName), position: t.Optional(Position) });
export const LabelCreate = t.Object({ name: Name, color: t.Optional(t.String({ description: "#RRGGBB; default #9ca3af" })) });
export const LabelPatch = t.Object({ name: t.Optional(Name), color: t.Optional(t.String({ description: "#RRGGBB" })) });

const cardFields = {
  body: t.Optional(t.String({ description: "Markdown, at most 50,000 characters" })),
  list: t.Optional(t.String({ pattern: ListRef.pattern, description: "List name or id; default on create: the first list" })),
  priority: t.Optional(t.String({ description: "urgent, high, medium, low or none (default)" })),
  // User ids are the caller's handles, nothing the board looks up: checked by the card rules
  // (cards.ts) with the other fields, not by the schema, which would hide the checks that need
  // a lookup (unknown labels and lists) of the same request. The same for the assignee filter.
  assignees: t.Optional(t.Array(t.String({ description: "usr_... id" }), { description: "usr_... ids, at most 20" })),
  labels: t.Optional(t.Array(t.String(), { description: "Workspace label names (unknown: 400), at most 20; replaces the set on update" })),
  due_at: t.Optional(t.Nullable(t.String({ description: "ISO 8601; null clears" }))),
  metadata: t.Optional(Metadata),
  position: t.Optional(Position),
};
export const CardCreate = t.Object({ title: t.String({ description: "1-500 characters" }), ...cardFields });
export const CardPatch = t.Object({ title: t.Optional(t.String({ description: "1-500 characters" })), ...cardFields });
export const CardMove = t.Object({ list: t.Optional(t.String({ pattern: ListRef.pattern, description: "Target list name or id; default: the card's list" })), position: t.Optional(Position) });
export const BatchMove = t.Object({
  moves: t.Array(t.Object({ card_id: t.String(), list: t.Optional(t.String()), position: t.Optional(Position) }), { description: "1-100 moves, applied in order, all or nothing" }),
});
export const BatchMoved = t.Object({ data: t.Array(Card, { description: "The moved cards after the whole batch, in request order" }), moved: t.Integer() });
export const CommentCreate = t.Object({ body: t.String({ description: "Markdown, 1-10,000 characters" }) });

export const CardListQuery = t.Object({
  list: t.Optional(ListRef),
  label: t.Optional(t.Union([t.String(), t.Array(t.String())], { description: "Label name; repeatable, all must match" })),
  priority: t.Optional(t.String({ description: PRIORITIES.join(", ") })),
  assignee: t.Optional(t.String({ description: "usr_... id" })),
  // Strings checked with the other filters (validate.ts flag), so one 400 names every bad filter, lookups included.
  completed: t.Optional(t.String({ description: "true: completed cards only; false: open ones only" })),
  q: t.Optional(t.String({ description: "Full text over titles and bodies: every word must match as a prefix; ranked by relevance (title weighs more)" })),
  include_archived: t.Optional(t.String({ description: "true: archived cards too" })),
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 50" })),
  offset: t.Optional(t.QueryInteger({ description: "default 0" })),
});
export const ActivityQuery = t.Object({
  action: t.Optional(t.String({ description: "Only this action, e.g. card.moved" })),
  since: t.Optional(t.String({ description: "ISO 8601: entries at or after it" })),
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 50" })),
  offset: t.Optional(t.QueryInteger({ description: "default 0" })),
});
