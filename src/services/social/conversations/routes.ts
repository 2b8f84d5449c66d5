/** Routes of conversations: /conversations..., messages, read state, participants. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { CommunityParams, ErrorBody, errors, PageQuery, Uuid } from "../core/schemas";
import { Conversation, ConversationCreate, ConversationListQuery, ConversationPage, ConversationParams, Message, MessageCreate, MessagePage, ParticipantParams } from "./schemas";
import type { ConversationService } from "./service";

const tags = ["Community: conversations"];
const writeErrors = { ...errors, 409: ErrorBody, 422: ErrorBody };

export function conversationRoutes(conversations: ConversationService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .get("/conversations/unread-count", (c) => conversations.unreadCount(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: t.Object({ actor_id: Uuid("The participant") }),
      response: { 200: t.Object({ count: t.Integer() }), ...errors },
      detail: { tags, summary: "How many of the actor's conversations have unread messages (action social.read)", description: "Muted conversations are not counted. Exact: by message sequence, not timestamps." },
    })
    .get("/conversations", (c) => conversations.list(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: ConversationListQuery,
      response: { 200: ConversationPage, ...errors },
      detail: { tags, summary: "The actor's conversations, most recent activity first (action social.list)", description: "status inbox (default) leaves out conversations whose other participant (direct) or founder (group) the viewer restricts; requests lists only those; all lists both." },
    })
    .post("/conversations", (c) => write(deps, c, 201, (p) => conversations.create(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: ConversationCreate,
      response: { 201: Conversation, ...writeErrors },
      detail: {
        tags,
        summary: "Start a direct or group conversation (action social.create)",
        description: "Direct is idempotent (the existing conversation of the pair is returned); group always creates. 409 BLOCKED for a block between the creator and another participant; 422 GROUP_TOO_LARGE over max_group_conversation_size, CANNOT_MESSAGE_SELF." + IDEMPOTENT,
      },
    })
    .get("/conversations/:conversation_id", (c) => conversations.get(requirePrincipal(c.principal), c.params.community_id, c.params.conversation_id), {
      params: ConversationParams,
      response: { 200: Conversation, ...errors },
      detail: { tags, summary: "Read a conversation (action social.read)" },
    })
    .post("/conversations/:conversation_id/messages", (c) => write(deps, c, 201, (p) => conversations.send(p, c.params.community_id, c.params.conversation_id, c.body)), {
      params: ConversationParams,
      body: MessageCreate,
      response: { 201: Message, ...writeErrors },
      detail: { tags, summary: "Send a message (action social.create)", description: "The sender must be a participant (403 NOT_A_PARTICIPANT); 409 BLOCKED in a direct conversation with a block. Emits dm.message.created with recipient_actor_ids." + IDEMPOTENT },
    })
    .get("/conversations/:conversation_id/messages", (c) => conversations.messages(requirePrincipal(c.principal), c.params.community_id, c.params.conversation_id, c.query), {
      params: ConversationParams,
      query: PageQuery,
      response: { 200: MessagePage, ...errors },
      detail: { tags, summary: "Messages, newest first (action social.list)" },
    })
    .post("/conversations/:conversation_id/read", (c) => write(deps, c, 200, (p) => conversations.read(p, c.params.community_id, c.params.conversation_id, c.body)), {
      params: ConversationParams,
      body: t.Object({ actor_id: Uuid("The participant") }),
      response: { 200: Conversation, ...writeErrors },
      detail: { tags, summary: "Mark the conversation read for a participant (action social.update)", description: "Sets last_read_at; the conversation no longer counts as unread for that actor." + IDEMPOTENT },
    })
    .post("/conversations/:conversation_id/participants", (c) => write(deps, c, 200, (p) => conversations.addParticipants(p, c.params.community_id, c.params.conversation_id, c.body)), {
      params: ConversationParams,
      body: t.Object({ actor_id: Uuid("The participant adding"), actor_ids: t.Array(Uuid(), { description: "Actors to add" }) }),
      response: { 200: Conversation, ...writeErrors },
      detail: { tags, summary: "Add participants to a group (action social.update)", description: "422 NOT_A_GROUP for direct, GROUP_TOO_LARGE over the cap; 409 BLOCKED for a block between the adder and a new member." + IDEMPOTENT },
    })
    .patch("/conversations/:conversation_id/participants/:actor_id", (c) => write(deps, c, 200, (p) => conversations.setParticipant(p, c.params.community_id, c.params.conversation_id, c.params.actor_id, c.body)), {
      params: ParticipantParams,
      body: t.Object({ muted: t.Boolean() }),
      response: { 200: Conversation, ...writeErrors },
      detail: { tags, summary: "Mute or unmute the conversation for a participant (action social.update)", description: "Muted conversations leave the unread count." + IDEMPOTENT },
    })
    .delete("/conversations/:conversation_id/participants/:actor_id", async (c) => {
      await conversations.leave(requirePrincipal(c.principal), c.params.community_id, c.params.conversation_id, c.params.actor_id);
      c.set.status = 204;
    }, {
      params: ParticipantParams,
      response: { ...errors, 422: ErrorBody },
      detail: { tags, summary: "Leave a group (action social.delete); 204", description: "422 NOT_A_GROUP for a direct conversation.", responses: noContent() },
    });
}
