/** SQL of conversations, their participants and messages. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";

export interface ConversationRow {
  id: string;
  community_id: string;
  kind: "direct" | "group";
  name: string | null;
  created_by: string | null;
  direct_key: string | null;
  created_at: string;
  updated_at: string;
  last_message_at: string | null;
  message_seq: number;
}

export interface ParticipantRow {
  conversation_id: string;
  actor_id: string;
  community_id: string;
  role: string;
  muted: number;
  joined_at: string;
  last_read_at: string | null;
  activity_at: string;
  read_seq: number;
}

export interface MessageRow {
  id: string;
  conversation_id: string;
  community_id: string;
  sender_actor_id: string | null;
  body: string;
  assets: string;
  created_at: string;
}

export const conversationById = (db: Sql, communityId: string, id: string) =>
  db.get<ConversationRow>("SELECT * FROM social_conversations WHERE id = ? AND community_id = ?", id, communityId);

/** Locks the conversation row for the rest of the transaction (a no-op write). */
export const lockConversation = (db: Sql, id: string) => db.run("UPDATE social_conversations SET updated_at = updated_at WHERE id = ?", id);

export const directByKey = (db: Sql, key: string) => db.get<ConversationRow>("SELECT * FROM social_conversations WHERE direct_key = ?", key);

/** Inserts the conversation; false when a direct conversation of the same pair exists (concurrent create). */
export async function insertConversation(db: Sql, r: ConversationRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_conversations (id, community_id, kind, name, created_by, direct_key, created_at, updated_at, last_message_at)
     VALUES ($id, $community_id, $kind, $name, $created_by, $direct_key, $created_at, $updated_at, $last_message_at)
     ON CONFLICT (direct_key) DO NOTHING`,
    { id: r.id, community_id: r.community_id, kind: r.kind, name: r.name, created_by: r.created_by, direct_key: r.direct_key, created_at: r.created_at, updated_at: r.updated_at, last_message_at: r.last_message_at },
  );
  return n === 1;
}

/** Adds participants (existing ones are kept as they are); returns how many were added. */
export async function addParticipants(db: Sql, c: ConversationRow, actorIds: string[], now: string): Promise<number> {
  let added = 0;
  for (const id of actorIds) {
    added += await db.run(
      // A participant added later starts with nothing unread: the history before it joined is not "new".
      `INSERT INTO social_conversation_participants (conversation_id, actor_id, community_id, role, muted, joined_at, last_read_at, activity_at, read_seq)
       VALUES (?, ?, ?, 'member', 0, ?, NULL, ?, (SELECT message_seq FROM social_conversations WHERE id = ?)) ON CONFLICT (conversation_id, actor_id) DO NOTHING`,
      c.id, id, c.community_id, now, c.last_message_at ?? c.created_at, c.id,
    );
  }
  return added;
}

export const participantsOf = (db: Sql, conversationId: string) =>
  db.all<ParticipantRow>("SELECT * FROM social_conversation_participants WHERE conversation_id = ? ORDER BY joined_at, actor_id", conversationId);

export async function participantsOfMany(db: Sql, ids: string[]): Promise<ParticipantRow[]> {
  if (ids.length === 0) return [];
  return db.all<ParticipantRow>(`SELECT * FROM social_conversation_participants WHERE conversation_id IN (${ids.map(() => "?").join(",")}) ORDER BY joined_at, actor_id`, ...ids);
}

export const participant = (db: Sql, conversationId: string, actorId: string) =>
  db.get<ParticipantRow>("SELECT * FROM social_conversation_participants WHERE conversation_id = ? AND actor_id = ?", conversationId, actorId);

export const countParticipants = async (db: Sql, conversationId: string): Promise<number> =>
  Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM social_conversation_participants WHERE conversation_id = ?", conversationId))!.n);

export const removeParticipant = (db: Sql, conversationId: string, actorId: string) =>
  db.run("DELETE FROM social_conversation_participants WHERE conversation_id = ? AND actor_id = ?", conversationId, actorId);

export const setMuted = (db: Sql, conversationId: string, actorId: string, muted: number) =>
  db.run("UPDATE social_conversation_participants SET muted = ? WHERE conversation_id = ? AND actor_id = ?", muted, conversationId, actorId);

/** The participant has read every message so far: last_read_at = at, read_seq = the conversation's message_seq. */
export const markRead = (db: Sql, conversationId: string, actorId: string, at: string) =>
  db.run(
    `UPDATE social_conversation_participants SET last_read_at = ?, read_seq = (SELECT message_seq FROM social_conversations WHERE id = ?)
     WHERE conversation_id = ? AND actor_id = ?`,
    at, conversationId, conversationId, actorId,
  );

export async function insertMessage(db: Sql, m: MessageRow): Promise<void> {
  await db.run(
    `INSERT INTO social_messages (id, conversation_id, community_id, sender_actor_id, body, assets, created_at)
     VALUES ($id, $conversation_id, $community_id, $sender_actor_id, $body, $assets, $created_at)`,
    { ...m },
  );
  // The row lock of this UPDATE orders concurrent messages of one conversation: message_seq is exact.
  await db.run("UPDATE social_conversations SET last_message_at = ?, updated_at = ?, message_seq = message_seq + 1 WHERE id = ?", m.created_at, m.created_at, m.conversation_id);
  await db.run("UPDATE social_conversation_participants SET activity_at = ? WHERE conversation_id = ?", m.created_at, m.conversation_id);
}

/** Newest first. */
export function messagesOf(db: Sql, conversationId: string, after: Keyset | null, limit: number): Promise<MessageRow[]> {
  return after
    ? db.all<MessageRow>(
        "SELECT * FROM social_messages WHERE conversation_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?",
        conversationId, after.k, after.id, limit,
      )
    : db.all<MessageRow>("SELECT * FROM social_messages WHERE conversation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", conversationId, limit);
}

export type Folder = "inbox" | "requests" | "all";

/**
 * A conversation is in the viewer's requests when the viewer restricts its other participant
 * (direct) or its founder (group); inbox is the rest.
 */
const RESTRICTED = `EXISTS (SELECT 1 FROM social_conversation_participants o
  JOIN social_edges e ON e.src_actor_id = p.actor_id AND e.kind = 'restrict' AND e.dst_actor_id = o.actor_id
  WHERE o.conversation_id = c.id AND o.actor_id <> p.actor_id AND (c.kind = 'direct' OR o.actor_id = c.created_by))`;

export type ListedRow = ConversationRow & { activity_at: string };

/** The actor's conversations, most recent activity first. */
export function conversationsOf(db: Sql, actorId: string, folder: Folder, after: Keyset | null, limit: number): Promise<ListedRow[]> {
  const where = ["p.actor_id = ?"];
  const args: (string | number)[] = [actorId];
  if (folder === "inbox") where.push(`NOT ${RESTRICTED}`);
  if (folder === "requests") where.push(RESTRICTED);
  if (after) {
    where.push("(p.activity_at, p.conversation_id) < (?, ?)");
    args.push(after.k, after.id);
  }
  args.push(limit);
  return db.all<ListedRow>(
    `SELECT c.*, p.activity_at FROM social_conversation_participants p JOIN social_conversations c ON c.id = p.conversation_id
     WHERE ${where.join(" AND ")} ORDER BY p.activity_at DESC, p.conversation_id DESC LIMIT ?`,
    ...args,
  );
}

/** Conversations of the actor, not muted, with a message after the actor's last read (by sequence, so exact). */
export async function unreadCount(db: Sql, actorId: string): Promise<number> {
  const r = await db.get<{ n: number }>(
    `SELECT count(*) AS n FROM social_conversation_participants p JOIN social_conversations c ON c.id = p.conversation_id
     WHERE p.actor_id = ? AND p.muted = 0 AND c.message_seq > p.read_seq`,
    actorId,
  );
  return Number(r!.n);
}
