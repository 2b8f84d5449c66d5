/**
 * Direct and group conversations, their messages and read state.
 *
 * Decisions the spec leaves open (Instagram / Mastodon behaviour):
 * - Direct: idempotent per pair (the existing conversation is returned, 201 either way);
 *   self-conversation 422; a block between the pair 409 BLOCKED (create and every message).
 * - Group: actor_ids are the members besides the creator (de-duplicated, the creator dropped),
 *   at least one; the group with its creator may hold at most the community setting
 *   max_group_conversation_size (over it: 422 GROUP_TOO_LARGE, also when adding); a block
 *   between the creator (or the adder) and a member is 409. Group messages are not checked
 *   for blocks between other members. name up to 100 characters, groups only.
 * - Participants: the actor in actor_id of messages, read, mute and participant changes must
 *   be a participant, else 403 NOT_A_PARTICIPANT. Any participant may add members to a group;
 *   leaving is DELETE .../participants/{actor_id} (groups only; 422 for direct; 404 for an
 *   unknown actor, 204 for one that is not a participant).
 * - Messages: body 1-10000 characters after trimming (stored trimmed); assets up to 20
 *   {asset_id, alt_text}, each a ready asset of the community owned by the sender (else 422
 *   INVALID_ASSET, as for posts and comments).
 *   Sending marks the conversation read for the sender. dm.message.created carries
 *   recipient_actor_ids (every other participant, muted ones included).
 * - Unread count: conversations not muted by the actor whose message number (message_seq)
 *   is beyond what the actor read (read_seq); exact under concurrency. POST .../read sets
 *   last_read_at and read_seq.
 * - Folders: requests holds the conversations whose other participant (direct) or founder
 *   (group) the viewer restricts; inbox the rest; all both. Most recent activity first.
 */
import type { Static } from "@sinclair/typebox";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, forbidden, invalidField, notFound } from "../../../core/errors";
import { isUuid, uuid } from "../../../core/ids";
import { type WebhookEngine, emitEvent } from "../../../kernel/webhooks";
import { checkAssets } from "../posts/service";
import type { Lane } from "../actors/lane";
import { isObject, page, pageArgs } from "../core/common";
import { checkUuid } from "../core/schemas";
import { blocked } from "../graph/follows";
import { blockBetween } from "../graph";
import { parseSettings } from "../communities/settings";
import type { CommunityRow } from "../communities/service";
import type { Conversation } from "./schemas";
import * as store from "./store";
import { SOCIAL_WEBHOOKS } from "../events";

export const MESSAGE_BODY_MAX = 10_000;
export const ASSETS_MAX = 20;
export const GROUP_NAME_MAX = 100;
const FOLDERS = ["inbox", "requests", "all"] as const;

const unprocessable = (message: string, code: string) => new ApiError(422, code, message);
const notParticipant = () => forbidden("The actor is not a participant of this conversation", "NOT_A_PARTICIPANT");

/** A conversation as the API shows it: the Conversation schema is its one declaration. */
export type ConversationView = Static<typeof Conversation>;

const participantView = (p: store.ParticipantRow) => ({ actor_id: p.actor_id, joined_at: p.joined_at, last_read_at: p.last_read_at, muted: !!p.muted, role: p.role });

const conversationView = (c: store.ConversationRow, participants: store.ParticipantRow[]): ConversationView => ({
  id: c.id,
  community_id: c.community_id,
  kind: c.kind,
  name: c.name,
  created_by: c.created_by,
  participants: participants.map(participantView),
  created_at: c.created_at,
  updated_at: c.updated_at,
  last_message_at: c.last_message_at,
});

const messageView = (m: store.MessageRow) => ({
  id: m.id,
  conversation_id: m.conversation_id,
  community_id: m.community_id,
  sender_actor_id: m.sender_actor_id,
  body: m.body,
  assets: JSON.parse(m.assets) as { asset_id: string; alt_text: string | null }[],
  created_at: m.created_at,
});

function assetsOf(v: unknown): { asset_id: string; alt_text: string | null }[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > ASSETS_MAX) throw invalidField("assets", `an array of at most ${ASSETS_MAX} {asset_id, alt_text}`);
  return v.map((a, i) => {
    if (!isObject(a) || typeof a.asset_id !== "string" || !isUuid(a.asset_id)) throw invalidField(`assets[${i}].asset_id`, "required, an asset uuid");
    if (a.alt_text !== undefined && a.alt_text !== null && (typeof a.alt_text !== "string" || a.alt_text.length > 1000)) throw invalidField(`assets[${i}].alt_text`, "a string of at most 1000 characters");
    return { asset_id: a.asset_id.toLowerCase(), alt_text: (a.alt_text as string | undefined) ?? null };
  });
}

export class ConversationService {
  constructor(
    private readonly lane: Lane,
    private readonly engine: WebhookEngine,
  ) {}

  private async view(db: Sql, c: store.ConversationRow): Promise<ConversationView> {
    return conversationView(c, await store.participantsOf(db, c.id));
  }

  private async conversation(db: Sql, communityId: string, id: string): Promise<store.ConversationRow> {
    const c = await store.conversationById(db, communityId, id.toLowerCase());
    if (!c) throw notFound("Conversation");
    return c;
  }

  /** The conversation and the acting participant (actor of the community, member of the conversation). */
  private async asParticipant(db: Sql, communityId: string, id: string, actorId: unknown, field = "actor_id") {
    const conv = await this.conversation(db, communityId, id);
    const actor = await this.lane.actor(db, communityId, checkUuid(actorId, field), field);
    const p = await store.participant(db, conv.id, actor.id);
    if (!p) throw notParticipant();
    return { conv, actor, p };
  }

  private groupCap(c: CommunityRow): number {
    return parseSettings(c.settings).max_group_conversation_size;
  }

  async create(p: Principal, communityId: string, body: unknown): Promise<ConversationView> {
    const c = await this.lane.community(p, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const kind = o.kind === undefined || o.kind === null ? "direct" : o.kind;
    if (kind !== "direct" && kind !== "group") throw invalidField("kind", "direct or group");
    const creatorId = checkUuid(o.actor_id, "actor_id");
    if (kind === "direct") {
      if (o.name !== undefined && o.name !== null) throw invalidField("name", "only groups have a name");
      return this.createDirect(c, creatorId, checkUuid(o.recipient_actor_id, "recipient_actor_id"));
    }
    if (!Array.isArray(o.actor_ids)) throw invalidField("actor_ids", "required for a group: the members besides the creator");
    if (o.actor_ids.length > 1000) throw invalidField("actor_ids", "at most 1000 ids");
    const members = [...new Set(o.actor_ids.map((v, i) => checkUuid(v, `actor_ids[${i}]`)))].filter((id) => id !== creatorId);
    if (members.length === 0) throw invalidField("actor_ids", "at least one member besides the creator");
    let name: string | null = null;
    if (o.name !== undefined && o.name !== null) {
      if (typeof o.name !== "string" || o.name.trim().length > GROUP_NAME_MAX) throw invalidField("name", `at most ${GROUP_NAME_MAX} characters`);
      name = o.name.trim() || null;
    }
    const cap = this.groupCap(c);
    if (members.length + 1 > cap) throw unprocessable(`A group holds at most ${cap} participants (max_group_conversation_size), its creator included`, "GROUP_TOO_LARGE");
    return tx(this.lane.ctx.db, async (t) => {
      const creator = await this.lane.actor(t, c.id, creatorId);
      for (const id of members) {
        await this.lane.actor(t, c.id, id, "actor_ids");
        if (await blockBetween(t, creator.id, id)) throw blocked();
      }
      const now = this.lane.ctx.clock.iso();
      const row: store.ConversationRow = { id: uuid(), community_id: c.id, kind: "group", name, created_by: creator.id, direct_key: null, created_at: now, updated_at: now, last_message_at: null, message_seq: 0 };
      await store.insertConversation(t, row);
      await store.addParticipants(t, row, [creator.id, ...members], now);
      return this.view(t, row);
    });
  }

  private async createDirect(c: CommunityRow, aId: string, bId: string): Promise<ConversationView> {
    return tx(this.lane.ctx.db, async (t) => {
      const a = await this.lane.actor(t, c.id, aId);
      const b = await this.lane.actor(t, c.id, bId, "recipient_actor_id");
      if (a.id === b.id) throw unprocessable("A direct conversation needs two different actors", "CANNOT_MESSAGE_SELF");
      if (await blockBetween(t, a.id, b.id)) throw blocked();
      const key = a.id < b.id ? `${a.id}:${b.id}` : `${b.id}:${a.id}`;
      const existing = await store.directByKey(t, key);
      if (existing) return this.view(t, existing);
      const now = this.lane.ctx.clock.iso();
      const row: store.ConversationRow = { id: uuid(), community_id: c.id, kind: "direct", name: null, created_by: null, direct_key: key, created_at: now, updated_at: now, last_message_at: null, message_seq: 0 };
      if (!(await store.insertConversation(t, row))) return this.view(t, (await store.directByKey(t, key))!);
      await store.addParticipants(t, row, [a.id, b.id], now);
      return this.view(t, row);
    });
  }

  async get(p: Principal, communityId: string, id: string): Promise<ConversationView> {
    const c = await this.lane.community(p, communityId, "social.read");
    return this.view(this.lane.ctx.db, await this.conversation(this.lane.ctx.db, c.id, id));
  }

  async list(p: Principal, communityId: string, q: { actor_id?: string; status?: string; limit?: number; cursor?: string }) {
    const c = await this.lane.community(p, communityId, "social.list");
    const folder = q.status === undefined || q.status === "" ? "inbox" : q.status;
    if (!(FOLDERS as readonly string[]).includes(folder)) throw invalidField("status", FOLDERS.join(", "));
    const a = await this.lane.actor(this.lane.ctx.db, c.id, checkUuid(q.actor_id, "actor_id"));
    const { limit, after } = pageArgs(q);
    const rows = await store.conversationsOf(this.lane.ctx.db, a.id, folder as store.Folder, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.activity_at, id: r.id }), (r) => r);
    const parts = await store.participantsOfMany(this.lane.ctx.db, pg.data.map((r) => r.id));
    return { data: pg.data.map((r) => conversationView(r, parts.filter((x) => x.conversation_id === r.id))), pagination: pg.pagination };
  }

  async unreadCount(p: Principal, communityId: string, q: { actor_id?: string }) {
    const c = await this.lane.community(p, communityId, "social.read");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, checkUuid(q.actor_id, "actor_id"));
    return { count: await store.unreadCount(this.lane.ctx.db, a.id) };
  }

  async send(p: Principal, communityId: string, id: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.create");
    const o = isObject(body) ? body : {};
    if (typeof o.body !== "string") throw invalidField("body", "required");
    const text = o.body.trim();
    if (text.length < 1 || text.length > MESSAGE_BODY_MAX) throw invalidField("body", `1-${MESSAGE_BODY_MAX} characters after trimming`);
    const assets = assetsOf(o.assets);
    return tx(this.lane.ctx.db, async (t) => {
      const { conv, actor } = await this.asParticipant(t, c.id, id, o.actor_id);
      await checkAssets(t, c.id, actor.id, assets);
      const parts = await store.participantsOf(t, conv.id);
      const recipients = parts.map((x) => x.actor_id).filter((x) => x !== actor.id);
      if (conv.kind === "direct") for (const r of recipients) if (await blockBetween(t, actor.id, r)) throw blocked();
      const now = this.lane.ctx.clock.iso();
      const m: store.MessageRow = { id: uuid(), conversation_id: conv.id, community_id: c.id, sender_actor_id: actor.id, body: text, assets: JSON.stringify(assets), created_at: now };
      await store.insertMessage(t, m);
      await store.markRead(t, conv.id, actor.id, now);
      const view = messageView(m);
      await emitEvent(this.engine, SOCIAL_WEBHOOKS, t, c.id, "dm.message.created", { ...view, conversation_kind: conv.kind, recipient_actor_ids: recipients });
      return view;
    });
  }

  async messages(p: Principal, communityId: string, id: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(p, communityId, "social.list");
    const conv = await this.conversation(this.lane.ctx.db, c.id, id);
    const { limit, after } = pageArgs(q);
    return page(await store.messagesOf(this.lane.ctx.db, conv.id, after, limit + 1), limit, (m) => ({ k: m.created_at, id: m.id }), messageView);
  }

  async read(p: Principal, communityId: string, id: string, body: unknown): Promise<ConversationView> {
    const c = await this.lane.community(p, communityId, "social.update");
    return tx(this.lane.ctx.db, async (t) => {
      const { conv, actor } = await this.asParticipant(t, c.id, id, isObject(body) ? body.actor_id : undefined);
      await store.markRead(t, conv.id, actor.id, this.lane.ctx.clock.iso());
      return this.view(t, conv);
    });
  }

  async setParticipant(p: Principal, communityId: string, id: string, actorId: string, body: unknown): Promise<ConversationView> {
    const c = await this.lane.community(p, communityId, "social.update");
    const o = isObject(body) ? body : {};
    if (typeof o.muted !== "boolean") throw invalidField("muted", "required, a boolean");
    return tx(this.lane.ctx.db, async (t) => {
      const { conv, actor } = await this.asParticipant(t, c.id, id, actorId);
      await store.setMuted(t, conv.id, actor.id, o.muted ? 1 : 0);
      return this.view(t, conv);
    });
  }

  async addParticipants(p: Principal, communityId: string, id: string, body: unknown): Promise<ConversationView> {
    const c = await this.lane.community(p, communityId, "social.update");
    const o = isObject(body) ? body : {};
    if (!Array.isArray(o.actor_ids) || o.actor_ids.length < 1 || o.actor_ids.length > 1000) throw invalidField("actor_ids", "1-1000 actor uuids");
    const ids = [...new Set(o.actor_ids.map((v, i) => checkUuid(v, `actor_ids[${i}]`)))];
    const cap = this.groupCap(c);
    return tx(this.lane.ctx.db, async (t) => {
      const { conv, actor } = await this.asParticipant(t, c.id, id, o.actor_id);
      if (conv.kind !== "group") throw unprocessable("Only group conversations take more participants", "NOT_A_GROUP");
      const fresh = [];
      for (const mid of ids) {
        const m = await this.lane.actor(t, c.id, mid, "actor_ids");
        if (await store.participant(t, conv.id, m.id)) continue;
        if (await blockBetween(t, actor.id, m.id)) throw blocked();
        fresh.push(m.id);
      }
      // Concurrent adds to one group wait for each other, so the cap holds.
      await store.lockConversation(t, conv.id);
      if ((await store.countParticipants(t, conv.id)) + fresh.length > cap) throw unprocessable(`A group holds at most ${cap} participants (max_group_conversation_size)`, "GROUP_TOO_LARGE");
      await store.addParticipants(t, conv, fresh, this.lane.ctx.clock.iso());
      return this.view(t, conv);
    });
  }

  async leave(p: Principal, communityId: string, id: string, actorId: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      const conv = await this.conversation(t, c.id, id);
      if (conv.kind !== "group") throw unprocessable("A direct conversation cannot be left", "NOT_A_GROUP");
      const a = await this.lane.actor(t, c.id, actorId);
      await store.removeParticipant(t, conv.id, a.id);
    });
  }
}
