/** TypeBox models of conversations and messages. */
import { t } from "../../../core/schema";
import { AssetRef, laneParams, Pagination, Uuid, UuidOut } from "../core/schemas";

export const Conversation = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  kind: t.String({ description: "direct | group" }),
  name: t.Nullable(t.String({ description: "null for direct" })),
  created_by: t.Nullable(UuidOut("Group founder; null for direct")),
  participants: t.Array(
    t.Object({ actor_id: UuidOut(), joined_at: t.String(), last_read_at: t.Nullable(t.String()), muted: t.Boolean(), role: t.String({ description: "member" }) }),
    { description: "By join time ascending" },
  ),
  created_at: t.String(),
  updated_at: t.String(),
  last_message_at: t.Nullable(t.String()),
});
export const ConversationPage = t.Object({ data: t.Array(Conversation), pagination: Pagination });

export const ConversationCreate = t.Object({
  actor_id: Uuid("Creator"),
  kind: t.Optional(t.String({ description: "direct (default) | group" })),
  recipient_actor_id: t.Optional(Uuid("Required for direct")),
  actor_ids: t.Optional(t.Array(Uuid(), { description: "Required for group: the members besides the creator; the group may hold max_group_conversation_size participants, creator included" })),
  name: t.Optional(t.Nullable(t.String({ description: "Group only, up to 100 characters" }))),
});

export const ConversationListQuery = t.Object({
  actor_id: Uuid("Viewer"),
  status: t.Optional(t.String({ description: "inbox (default): not from restricted actors; requests: only those; all" })),
  limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String()),
});

const Asset = t.Object({ asset_id: UuidOut(), alt_text: t.Nullable(t.String()) });

export const Message = t.Object({
  id: UuidOut(),
  conversation_id: UuidOut(),
  community_id: UuidOut(),
  sender_actor_id: t.Nullable(UuidOut("null once the sender was deleted")),
  body: t.String(),
  assets: t.Array(Asset),
  created_at: t.String(),
});
export const MessagePage = t.Object({ data: t.Array(Message), pagination: Pagination });
export const MessageCreate = t.Object({
  actor_id: Uuid("Sender, a participant"),
  body: t.String({ description: "1-10000 characters after trimming" }),
  assets: t.Optional(t.Array(AssetRef, { description: "Up to 20" })),
});

export const ConversationParams = laneParams("conversation_id");
export const ParticipantParams = laneParams("conversation_id", "actor_id");
