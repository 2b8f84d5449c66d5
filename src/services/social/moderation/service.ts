/**
 * Flags, the moderation queue and moderation actions (Discourse's review queue, Mastodon's
 * reports).
 *
 * - POST /flags {reporter_actor_id, target_type post|comment|actor, target_id, reason, note}:
 *   one open flag per reporter and target (a repeat answers the open flag, created false).
 *   When the distinct reporters of open flags on a post or comment reach the community's
 *   flag_auto_hide_threshold (default 3), the target is hidden until a moderator decides
 *   (flag.created carries auto_hidden true). Actors are never hidden automatically.
 * - Queue (admin lane): targets with open flags, oldest first, with counts and reasons.
 * - Actions (admin lane): hide, remove (post moderation hidden/removed; comment status
 *   hidden/removed), restore (visible again; a banned actor active again and its shadow
 *   ban lifted), warn (a moderation notification only), ban (the actor, or the author of
 *   the post or comment: suspended, or with shadow true shadow-banned until duration_s
 *   passes, null = indefinitely), dismiss (flags dismissed; an auto-hidden target shown
 *   again). Every action but dismiss resolves the target's open flags; each changed flag
 *   emits flag.updated, each action moderation.action.applied, and hide, remove, warn and
 *   ban notify the target actor (type moderation).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, invalidField, notFound } from "../../../core/errors";
import { isUuid, uuid } from "../../../core/ids";
import * as actorRecords from "../actors";
import { isObject, page, pageArgs } from "../core/common";
import * as commentRecords from "../comments";
import { addActivity } from "../notifications";
import type { PostService } from "../posts/service";
import * as postRecords from "../posts";
import { parseSettings } from "../communities/settings";
import * as store from "./store";

export const REASONS = ["spam", "harassment", "hate", "violence", "sexual", "self_harm", "misinformation", "illegal", "other", "keyword_filter"] as const;
export const ACTIONS = ["hide", "remove", "restore", "warn", "ban", "dismiss"] as const;
export const NOTE_MAX = 2_000;

const flagView = (f: store.FlagRow) => ({ ...f, auto_hidden: Number(f.auto_hidden) === 1 });

interface Target {
  type: store.TargetType;
  id: string;
  actorId: string;
  post?: postRecords.PostRow;
  comment?: commentRecords.CommentRow;
}

export class ModerationService {
  constructor(private readonly posts: PostService) {}

  private get lane() {
    return this.posts.lane;
  }

  /** An admin-lane community: the caller needs `action` in the workspace; another workspace's community is 404. */
  private async adminCommunity(p: Principal, workspaceId: string, communityId: string, action: "social.read" | "social.update" | "social.list") {
    const c = await this.lane.community(p, communityId, action);
    if (c.workspace_id !== workspaceId) throw notFound("Community");
    return c;
  }

  private async target(t: Sql, communityId: string, type: unknown, id: unknown): Promise<Target> {
    if (type !== "post" && type !== "comment" && type !== "actor") throw invalidField("target_type", "post, comment or actor");
    if (typeof id !== "string" || !isUuid(id)) throw invalidField("target_id", "required, a uuid");
    const tid = id.toLowerCase();
    if (type === "actor") return { type, id: tid, actorId: (await this.lane.actor(t, communityId, tid, "target_id")).id };
    if (type === "post") {
      const p = await postRecords.postById(t, communityId, tid);
      if (!p || p.deleted_at !== null) throw notFound("Post");
      return { type, id: tid, actorId: p.actor_id, post: p };
    }
    const c = await commentRecords.commentInCommunity(t, communityId, tid);
    if (!c || c.deleted_at !== null) throw notFound("Comment");
    return { type, id: tid, actorId: c.actor_id, comment: c };
  }

  /** Shows or hides a post or comment (null: visible again); comment counts follow published-ness. */
  private async setState(t: Sql, tg: Target, state: "hidden" | "removed" | null, now: string): Promise<void> {
    if (tg.post) {
      await postRecords.updatePost(t, tg.id, { moderation: state, updated_at: now });
      return;
    }
    if (!tg.comment) return;
    const cur = tg.comment;
    const next = state ?? (cur.status === "hidden" || cur.status === "removed" ? "published" : cur.status);
    if (next === cur.status) return;
    await commentRecords.updateComment(t, cur.id, { status: next, updated_at: now });
    const delta = (next === "published" ? 1 : 0) - (cur.status === "published" ? 1 : 0);
    if (delta !== 0) {
      await postRecords.bumpPost(t, cur.post_id, "comment_count", delta);
      await actorRecords.bumpCounter(t, cur.actor_id, "comment_count", delta, now);
    }
  }

  async flag(pr: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const reason = typeof o.reason === "string" && (REASONS as readonly string[]).includes(o.reason) && o.reason !== "keyword_filter" ? o.reason : null;
    if (!reason) throw invalidField("reason", `one of ${REASONS.filter((r) => r !== "keyword_filter").join(", ")}`);
    if (o.note !== undefined && o.note !== null && (typeof o.note !== "string" || o.note.length > NOTE_MAX)) throw invalidField("note", `at most ${NOTE_MAX} characters`);
    const threshold = parseSettings(c.settings).flag_auto_hide_threshold;
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const reporter = await this.posts.writer(t, c.id, o.reporter_actor_id, "reporter_actor_id");
      const tg = await this.target(t, c.id, o.target_type, o.target_id);
      if (tg.actorId === reporter.id) throw new ApiError(422, "CANNOT_FLAG_SELF", "An actor cannot flag itself or its own content");
      const row: store.FlagRow = { id: uuid(), community_id: c.id, reporter_actor_id: reporter.id, target_type: tg.type, target_id: tg.id, target_actor_id: tg.actorId, reason, note: (o.note as string | undefined) ?? null, status: "open", auto_hidden: 0, created_at: now, updated_at: now };
      if (!(await store.insertFlag(t, row))) return { flag: flagView((await store.openFlagOf(t, reporter.id, tg.type, tg.id)) as store.FlagRow), created: false };
      const visible = tg.post ? tg.post.moderation === null : tg.comment ? tg.comment.status === "published" || tg.comment.status === "pending_approval" : false;
      if (tg.type !== "actor" && visible && (await store.distinctOpenFlaggers(t, tg.type, tg.id)) >= threshold) {
        await this.setState(t, tg, "hidden", now);
        await store.markAutoHidden(t, tg.type, tg.id);
        row.auto_hidden = 1;
      }
      const view = flagView(row);
      await this.posts.emit(t, c.id, "flag.created", view);
      return { flag: view, created: true };
    });
  }

  async queue(pr: Principal, workspaceId: string, communityId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.adminCommunity(pr, workspaceId, communityId, "social.list");
    const { limit, after } = pageArgs(q);
    const rows = await store.queue(this.lane.ctx.db, c.id, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.first_flagged_at, id: r.target_id }), (r) => r);
    const data = [];
    for (const r of pg.data) {
      data.push({
        target_type: r.target_type,
        target_id: r.target_id,
        target_actor_id: r.target_actor_id,
        flag_count: Number(r.flag_count),
        reporter_count: Number(r.reporter_count),
        reasons: await store.reasonsOf(this.lane.ctx.db, r.target_type, r.target_id),
        auto_hidden: Number(r.auto_hidden) === 1,
        first_flagged_at: r.first_flagged_at,
        last_flagged_at: r.last_flagged_at,
        flags: (await store.openFlagsOn(this.lane.ctx.db, r.target_type, r.target_id)).map(flagView),
      });
    }
    return { data, pagination: pg.pagination };
  }

  async act(pr: Principal, workspaceId: string, communityId: string, body: unknown) {
    const c = await this.adminCommunity(pr, workspaceId, communityId, "social.update");
    const o = isObject(body) ? body : {};
    const action = o.action;
    if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) throw invalidField("action", ACTIONS.join(", "));
    const act = action as store.ActionRow["action"];
    if (o.reason !== undefined && o.reason !== null && (typeof o.reason !== "string" || o.reason.length > NOTE_MAX)) throw invalidField("reason", `at most ${NOTE_MAX} characters`);
    if (o.moderator_external_id !== undefined && o.moderator_external_id !== null && (typeof o.moderator_external_id !== "string" || o.moderator_external_id.length > 256)) throw invalidField("moderator_external_id", "at most 256 characters");
    const shadow = o.shadow === true;
    let until: string | null = null;
    const now = this.posts.now();
    if (o.duration_s !== undefined && o.duration_s !== null) {
      if (typeof o.duration_s !== "number" || !Number.isInteger(o.duration_s) || o.duration_s < 1) throw invalidField("duration_s", "a positive integer (seconds)");
      until = new Date(Date.parse(now) + o.duration_s * 1000).toISOString();
    }
    return tx(this.lane.ctx.db, async (t) => {
      let tg: Target;
      let flagId: string | null = null;
      if (o.flag_id !== undefined && o.flag_id !== null) {
        const f = typeof o.flag_id === "string" && isUuid(o.flag_id) ? await store.flagById(t, c.id, o.flag_id.toLowerCase()) : null;
        if (!f) throw notFound("Flag");
        flagId = f.id;
        tg = await this.target(t, c.id, f.target_type, f.target_id);
      } else tg = await this.target(t, c.id, o.target_type, o.target_id);
      if ((act === "hide" || act === "remove") && tg.type === "actor") throw new ApiError(422, "INVALID_TARGET", "hide and remove apply to posts and comments; use ban for actors");
      if (act === "hide" || act === "remove") await this.setState(t, tg, act === "hide" ? "hidden" : "removed", now);
      if (act === "restore") {
        await this.setState(t, tg, null, now);
        if (tg.type === "actor") await actorRecords.reinstateActor(t, tg.actorId, now);
      }
      if (act === "ban") {
        if (shadow) await actorRecords.shadowBanActor(t, tg.actorId, until, (o.reason as string | undefined) ?? null, now);
        else await actorRecords.suspendActor(t, tg.actorId, now);
      }
      const open = await store.openFlagsOn(t, tg.type, tg.id);
      if (act === "dismiss" && open.some((f) => Number(f.auto_hidden) === 1)) await this.setState(t, tg, null, now);
      for (const f of open) {
        const status = act === "dismiss" || act === "restore" ? "dismissed" : "resolved";
        if ((await store.setFlagStatus(t, f.id, status, now)) === 1) await this.posts.emit(t, c.id, "flag.updated", { ...flagView({ ...f, status, updated_at: now }), changed_fields: ["status"] });
      }
      const row: store.ActionRow = {
        id: uuid(), community_id: c.id, action: act, target_type: tg.type, target_id: tg.id, target_actor_id: tg.actorId, flag_id: flagId,
        moderator_external_id: (o.moderator_external_id as string | undefined) ?? null, reason: (o.reason as string | undefined) ?? null,
        data: JSON.stringify(act === "ban" ? { shadow, shadow_banned_until: shadow ? until : null } : {}), created_at: now,
      };
      await store.insertAction(t, row);
      const view = { ...row, data: JSON.parse(row.data) as Record<string, unknown>, moderator_actor_id: null, flags_closed: open.length };
      await this.posts.emit(t, c.id, "moderation.action.applied", view);
      if (act !== "restore" && act !== "dismiss") {
        await addActivity(t, { community_id: c.id, recipient: tg.actorId, type: "moderation", target_type: tg.type, target_id: tg.id, from: null, data: { action: act, reason: row.reason }, now });
      }
      return view;
    });
  }

  // ------------------------------------------------------------------ keyword filters

  async keywords(pr: Principal, workspaceId: string, communityId: string) {
    const c = await this.adminCommunity(pr, workspaceId, communityId, "social.read");
    return { data: await store.keywordsOf(this.lane.ctx.db, c.id) };
  }

  async addKeyword(pr: Principal, workspaceId: string, communityId: string, body: unknown) {
    const c = await this.adminCommunity(pr, workspaceId, communityId, "social.update");
    const o = isObject(body) ? body : {};
    const kw = typeof o.keyword === "string" ? o.keyword.trim().toLowerCase().replace(/\s+/g, " ") : "";
    if (kw.length < 1 || kw.length > 100) throw invalidField("keyword", "1-100 characters");
    const action = o.action === undefined ? "hold" : o.action;
    if (action !== "block" && action !== "hold") throw invalidField("action", "block or hold");
    await store.upsertKeyword(this.lane.ctx.db, { id: uuid(), community_id: c.id, keyword: kw, action, created_at: this.posts.now() });
    return (await store.keywordOf(this.lane.ctx.db, c.id, kw)) as store.KeywordRow;
  }

  async removeKeyword(pr: Principal, workspaceId: string, communityId: string, id: string): Promise<void> {
    const c = await this.adminCommunity(pr, workspaceId, communityId, "social.update");
    await store.deleteKeyword(this.lane.ctx.db, c.id, id);
  }
}
