/**
 * Cards, comments and activity of the card board.
 *
 * Positions: the active cards of a list hold 0-based contiguous positions kept by the
 * server. Create, update and move take a target index (clamped to the end) and shift the
 * others, inside the transaction of the change; an archived card leaves the order (the
 * cards after it move up) and keeps its last position for reference.
 * Every mutation appends an activity row (with `changes` {field: {from, to}}) and emits its
 * webhook event in the same transaction.
 */
import { conflict, notFound } from "../../../core/errors";
import { prefixedId } from "../../../core/ids";
import type { Sql } from "../../../core/db";
import { lockKey } from "../../../core/store/sql";
import type { TackContext } from "./events";
import * as cs from "./cards-store";
import { Board, diff, has, type Body, type Caller } from "./service";
import * as store from "./store";
import { BODY_MAX, Checks, COMMENT_MAX, flag, offsetPage, pagination, searchWords, TITLE_MAX } from "./validate";
import { activityView, cardView, commentView, type CardView } from "./views";

export const BATCH_MOVE_MAX = 100;

export interface CardQuery {
  list?: string;
  label?: string | string[];
  priority?: string;
  assignee?: string;
  completed?: string;
  q?: string;
  include_archived?: string;
  limit?: number;
  offset?: number;
}

interface Move {
  from_list: string;
  to_list: string;
  from_position: number;
  to_position: number;
}

// ------------------------------------------------------------------ input rules
// The pure checks of each body, as in service.ts: before the lookups, and by body-rules.ts.

export function cardInput(v: Checks, b: Body) {
  return {
    title: v.text("title", b.title, 1, TITLE_MAX),
    body: has(b, "body") ? v.text("body", b.body, 0, BODY_MAX) : "",
    priority: has(b, "priority") ? v.priority("priority", b.priority) : "none",
    assignees: has(b, "assignees") ? v.assignees("assignees", b.assignees) : [],
    labels: has(b, "labels") ? v.labels("labels", b.labels) : [],
    due: has(b, "due_at") ? v.dateTime("due_at", b.due_at) : null,
    metadata: has(b, "metadata") ? v.metadata("metadata", b.metadata) : "{}",
    position: has(b, "position") ? v.position("position", b.position) : undefined,
  };
}

export function cardPatch(v: Checks, b: Body) {
  const patch: Partial<cs.CardRow> = {};
  if (has(b, "title")) patch.title = v.text("title", b.title, 1, TITLE_MAX);
  if (has(b, "body")) patch.body = v.text("body", b.body, 0, BODY_MAX);
  if (has(b, "priority")) patch.priority = v.priority("priority", b.priority);
  const assignees = has(b, "assignees") ? v.assignees("assignees", b.assignees) : undefined;
  if (assignees) patch.assignees = JSON.stringify(assignees);
  const labels = has(b, "labels") ? v.labels("labels", b.labels) : undefined;
  if (has(b, "due_at")) patch.due_at = v.dateTime("due_at", b.due_at) ?? (b.due_at === null ? null : undefined);
  if (has(b, "metadata")) patch.metadata = v.metadata("metadata", b.metadata);
  const position = has(b, "position") ? v.position("position", b.position) : undefined;
  return { patch, assignees, labels, position };
}

export function moveInput(v: Checks, b: Body) {
  const position = has(b, "position") ? v.position("position", b.position) : undefined;
  if (!has(b, "list") && position === undefined && !v.details.length) v.fail("list", "give list, position or both");
  return position;
}

export function batchMoveInput(v: Checks, b: Body): Body[] {
  const moves = Array.isArray(b.moves) ? (b.moves as Body[]) : [];
  if (!Array.isArray(b.moves) || !moves.length) v.fail("moves", `an array of 1-${BATCH_MOVE_MAX} {card_id, list, position}`);
  else if (moves.length > BATCH_MOVE_MAX) v.fail("moves", `at most ${BATCH_MOVE_MAX} moves per request`);
  return moves;
}

/** One batch item's own checks: an object, a string card_id, a valid position (false: not an object). */
export function batchItemInput(v: Checks, m: unknown, i: number): { position: number | undefined } | false {
  const f = `moves[${i}]`;
  if (m === null || typeof m !== "object" || Array.isArray(m)) return !!v.fail(f, "must be an object {card_id, list, position}");
  const item = m as Body;
  if (typeof item.card_id !== "string") v.fail(`${f}.card_id`, "a card id");
  return { position: item.position === undefined ? undefined : v.position(`${f}.position`, item.position) };
}

export function commentInput(v: Checks, b: Body) {
  const body = v.text("body", b.body, 1, COMMENT_MAX);
  if (body !== undefined && !body.trim()) v.fail("body", "must not be blank");
  return body;
}

export class Cards {
  constructor(
    readonly m: TackContext,
    readonly board: Board,
  ) {}

  async out(db: Sql, row: cs.CardRow): Promise<CardView> {
    return cardView(row, (await cs.labelNamesOf(db, [row.id])).get(row.id)!);
  }

  async card(db: Sql, c: Caller, wsRef: string, projectRef: string, id: string, write = false) {
    const { ws, project } = await this.board.project(db, c, wsRef, projectRef, write);
    const card = await cs.cardById(db, project.id, id);
    if (!card) throw notFound("Card");
    if (write && card.archived_at) throw conflict("The card is archived", "ARCHIVED");
    return { ws, project, card };
  }

  /** Label ids of names; unknown names are problems of `field` (with their index). */
  private async labelIds(t: Sql, v: Checks, wsId: string, names: string[], field: string): Promise<string[]> {
    const rows = await store.labelsByName(t, wsId, names);
    const byName = new Map(rows.map((r) => [r.name, r.id]));
    names.forEach((n, i) => {
      if (!byName.has(n)) v.fail(`${field}[${i}]`, `unknown label "${n}" (create it under /labels first)`);
    });
    return names.map((n) => byName.get(n)!).filter(Boolean);
  }

  private async targetList(t: Sql, v: Checks, projectId: string, ref: unknown, field: string): Promise<store.ListRow | undefined> {
    if (typeof ref !== "string" || !ref) return v.fail(field, "a list name or id");
    const list = await store.listByRef(t, projectId, ref);
    if (!list) return v.fail(field, `no list "${ref}" in this project`);
    return list;
  }

  /** Moves an active card to position `to` (clamped) of `list`, shifting the others. */
  private async place(t: Sql, card: cs.CardRow, list: store.ListRow, to: number | undefined, at: string): Promise<Move> {
    const from = Number(card.position);
    let pos: number;
    if (list.id === card.list_id) {
      const last = (await cs.activeCardCount(t, list.id)) - 1;
      pos = Math.min(to ?? last, last);
      if (pos < from) await cs.shiftCards(t, list.id, pos, from - 1, 1);
      if (pos > from) await cs.shiftCards(t, list.id, from + 1, pos, -1);
    } else {
      await cs.shiftCards(t, card.list_id, from + 1, Number.MAX_SAFE_INTEGER, -1);
      const n = await cs.activeCardCount(t, list.id);
      pos = Math.min(to ?? n, n);
      if (pos < n) await cs.shiftCards(t, list.id, pos, n - 1, 1);
    }
    await cs.updateCard(t, card.id, { list_id: list.id, position: pos }, at);
    return { from_list: card.list_id, to_list: list.id, from_position: from, to_position: pos };
  }

  private async moved(t: Sql, c: Caller, wsId: string, card: cs.CardRow, m: Move) {
    if (m.from_list === m.to_list && m.from_position === m.to_position) return;
    const changes: Record<string, { from: unknown; to: unknown }> = { position: { from: m.from_position, to: m.to_position } };
    if (m.from_list !== m.to_list) changes.list_id = { from: m.from_list, to: m.to_list };
    await this.board.activity(t, c, card.project_id, card.id, "card.moved", changes);
    const view = await this.out(t, (await cs.cardById(t, card.project_id, card.id))!);
    await this.m.emit(t, wsId, "card.moved", { ...view, ...m, changes, actor_id: c.actorId });
  }

  // ------------------------------------------------------------------ create, read

  async create(c: Caller, wsRef: string, projectRef: string, b: Body) {
    const v = new Checks();
    const { title, body, priority, assignees, labels, due, metadata, position } = cardInput(v, b);
    return this.board.write(async (t) => {
      const { ws, project } = await this.board.project(t, c, wsRef, projectRef, true);
      let list: store.ListRow | undefined;
      if (has(b, "list")) list = await this.targetList(t, v, project.id, b.list, "list");
      else if (!(list = (await store.listsOfProject(t, project.id))[0])) v.fail("list", "the project has no lists: create one first");
      const labelIds = labels ? await this.labelIds(t, v, ws.id, labels, "labels") : [];
      v.done();
      // At a position: the cards from it on shift down first. Without one, the insert appends.
      let pos: number | null = null;
      if (position !== undefined) {
        const n = await cs.activeCardCount(t, list!.id);
        pos = Math.min(position, n);
        if (pos < n) await cs.shiftCards(t, list!.id, pos, n - 1, 1);
      }
      const at = this.m.ctx.clock.iso();
      const row = await cs.insertCard(t, {
        id: prefixedId("card"), workspace_id: ws.id, project_id: project.id, list_id: list!.id,
        title: title!, body: body!, priority: priority!, position: pos, assignees: JSON.stringify(assignees), due_at: due ?? null,
        completed_at: null, metadata: metadata!, archived_at: null, created_by: c.actorId, created_at: at, updated_at: at,
      });
      await cs.setCardLabels(t, row.id, labelIds, false);
      const view = cardView(row, [...labels!].sort());
      await this.board.activity(t, c, project.id, row.id, "card.created", { title: { from: null, to: row.title }, list_id: { from: null, to: row.list_id }, position: { from: null, to: row.position } });
      await this.m.emit(t, ws.id, "card.created", { ...view, actor_id: c.actorId });
      return view;
    });
  }

  async list(c: Caller, wsRef: string, projectRef: string, q: CardQuery) {
    const v = new Checks();
    const { limit, offset } = offsetPage(q);
    const { ws, project } = await this.board.project(this.m.ctx.db, c, wsRef, projectRef);
    const filter: cs.CardFilter = { projectId: project.id, includeArchived: flag(v, "include_archived", q.include_archived) ?? false, labelIds: [], words: [] };
    if (q.list !== undefined) filter.listId = (await this.targetList(this.m.ctx.db, v, project.id, q.list, "list"))?.id;
    if (q.label !== undefined) {
      const names = Array.isArray(q.label) ? q.label : [q.label];
      filter.labelIds = await this.labelIds(this.m.ctx.db, v, ws.id, [...new Set(names)], "label");
    }
    if (q.priority !== undefined) filter.priority = v.priority("priority", q.priority);
    if (q.assignee !== undefined) filter.assignee = v.assignees("assignee", [q.assignee])?.[0];
    filter.completed = flag(v, "completed", q.completed);
    if (q.q !== undefined) {
      if (q.q.length > 200) v.fail("q", "at most 200 characters");
      else if (!(filter.words = searchWords(q.q)).length) v.fail("q", "needs at least one letter or digit");
    }
    v.done();
    const { total, rows } = await cs.searchCards(this.m.ctx.db, filter, limit, offset);
    const labels = await cs.labelNamesOf(this.m.ctx.db, rows.map((r) => r.id));
    return { data: rows.map((r) => cardView(r, labels.get(r.id)!)), pagination: pagination(total, limit, offset, rows.length) };
  }

  async get(c: Caller, wsRef: string, projectRef: string, id: string) {
    const { card } = await this.card(this.m.ctx.db, c, wsRef, projectRef, id);
    return this.out(this.m.ctx.db, card);
  }

  // ------------------------------------------------------------------ update, archive

  async update(c: Caller, wsRef: string, projectRef: string, id: string, b: Body) {
    const v = new Checks();
    const { patch, assignees, labels, position } = cardPatch(v, b);
    return this.board.write(async (t) => {
      const { ws, project, card } = await this.card(t, c, wsRef, projectRef, id, true);
      const list = has(b, "list") ? await this.targetList(t, v, project.id, b.list, "list") : undefined;
      const labelIds = labels ? await this.labelIds(t, v, ws.id, labels, "labels") : undefined;
      v.done();
      const at = this.m.ctx.clock.iso();
      const changes = diff(card, patch);
      if (changes.assignees) changes.assignees = { from: JSON.parse(card.assignees), to: assignees };
      if (changes.metadata) changes.metadata = { from: JSON.parse(card.metadata), to: JSON.parse(patch.metadata!) };
      if (labels) {
        const before = (await cs.labelNamesOf(t, [card.id])).get(card.id)!;
        const after = [...labels].sort();
        if (JSON.stringify(before) !== JSON.stringify(after)) {
          changes.labels = { from: before, to: after };
          await cs.setCardLabels(t, card.id, labelIds!, true);
        }
      }
      if (Object.keys(changes).length) {
        await cs.updateCard(t, card.id, patch, at);
        if (patch.title !== undefined || patch.body !== undefined) await cs.reindexCard(t, card.search_id, patch.title ?? card.title, patch.body ?? card.body);
        await this.board.activity(t, c, project.id, card.id, "card.updated", changes);
        const view = await this.out(t, (await cs.cardById(t, project.id, card.id))!);
        await this.m.emit(t, ws.id, "card.updated", { ...view, changes, actor_id: c.actorId });
      }
      if (list || position !== undefined) {
        const m = await this.place(t, { ...card }, list ?? (await store.listByRef(t, project.id, card.list_id))!, position, at);
        await this.moved(t, c, ws.id, card, m);
      }
      return this.out(t, (await cs.cardById(t, project.id, card.id))!);
    });
  }

  async archive(c: Caller, wsRef: string, projectRef: string, id: string) {
    return this.board.write(async (t) => {
      const { ws, project } = await this.board.project(t, c, wsRef, projectRef);
      await lockKey(t, `tack:project:${project.id}`);
      const card = await cs.cardById(t, project.id, id);
      if (!card) throw notFound("Card");
      if (card.archived_at) return this.out(t, card);
      const at = this.m.ctx.clock.iso();
      await cs.shiftCards(t, card.list_id, Number(card.position) + 1, Number.MAX_SAFE_INTEGER, -1);
      await cs.updateCard(t, card.id, { archived_at: at }, at);
      await this.board.activity(t, c, project.id, card.id, "card.archived", { archived_at: { from: null, to: at } });
      const view = await this.out(t, (await cs.cardById(t, project.id, card.id))!);
      await this.m.emit(t, ws.id, "card.archived", { ...view, actor_id: c.actorId });
      return view;
    });
  }

  // ------------------------------------------------------------------ move, complete

  async move(c: Caller, wsRef: string, projectRef: string, id: string, b: Body) {
    const v = new Checks();
    const position = moveInput(v, b);
    return this.board.write(async (t) => {
      const { ws, project, card } = await this.card(t, c, wsRef, projectRef, id, true);
      const list = has(b, "list") ? await this.targetList(t, v, project.id, b.list, "list") : await store.listByRef(t, project.id, card.list_id);
      v.done();
      const m = await this.place(t, card, list!, position, this.m.ctx.clock.iso());
      await this.moved(t, c, ws.id, card, m);
      return this.out(t, (await cs.cardById(t, project.id, card.id))!);
    });
  }

  /** All or nothing: every item is checked first; one bad item is a 400 naming it, nothing moves. */
  async batchMove(c: Caller, wsRef: string, projectRef: string, b: Body) {
    const v = new Checks();
    const moves = batchMoveInput(v, b);
    v.done();
    return this.board.write(async (t) => {
      const { ws, project } = await this.board.project(t, c, wsRef, projectRef, true);
      const ids = moves.map((m) => m?.card_id);
      const cards = new Map((await cs.cardsByIds(t, project.id, ids.filter((x): x is string => typeof x === "string"))).map((r) => [r.id, r]));
      const seen = new Set<string>();
      const plan: { card: cs.CardRow; list: store.ListRow; position: number | undefined }[] = [];
      for (const [i, m] of moves.entries()) {
        const f = `moves[${i}]`;
        const item = batchItemInput(v, m, i);
        if (!item) continue;
        // A card_id that is no string was named by batchItemInput.
        const card = typeof m.card_id === "string" ? cards.get(m.card_id) : undefined;
        if (typeof m.card_id === "string") {
          if (!card) v.fail(`${f}.card_id`, `no card "${m.card_id}" in this project`);
          else if (card.archived_at) v.fail(`${f}.card_id`, "the card is archived");
          else if (seen.has(card.id)) v.fail(`${f}.card_id`, "moves the same card twice");
        }
        if (card) seen.add(card.id);
        const list = m.list === undefined && card ? await store.listByRef(t, project.id, card.list_id) : await this.targetList(t, v, project.id, m.list, `${f}.list`);
        if (card && list) plan.push({ card, list, position: item.position });
      }
      v.done();
      const at = this.m.ctx.clock.iso();
      for (const p of plan) {
        // The card as it is now: earlier moves of the batch may have shifted it.
        const now = (await cs.cardById(t, project.id, p.card.id))!;
        const m = await this.place(t, now, p.list, p.position, at);
        await this.moved(t, c, ws.id, now, m);
      }
      const after = await cs.cardsByIds(t, project.id, plan.map((p) => p.card.id));
      const byId = new Map(after.map((r) => [r.id, r]));
      const labels = await cs.labelNamesOf(t, after.map((r) => r.id));
      return { data: plan.map((p) => cardView(byId.get(p.card.id)!, labels.get(p.card.id)!)), moved: plan.length };
    });
  }

  /** Sets completed_at (idempotent: a completed card stays as it is, no event). */
  async complete(c: Caller, wsRef: string, projectRef: string, id: string, done: boolean) {
    return this.board.write(async (t) => {
      const { ws, project, card } = await this.card(t, c, wsRef, projectRef, id, true);
      if (!!card.completed_at === done) return this.out(t, card);
      const at = this.m.ctx.clock.iso();
      const completed_at = done ? at : null;
      await cs.updateCard(t, card.id, { completed_at }, at);
      const action = done ? "card.completed" : "card.reopened";
      await this.board.activity(t, c, project.id, card.id, action, { completed_at: { from: card.completed_at, to: completed_at } });
      const view = await this.out(t, (await cs.cardById(t, project.id, card.id))!);
      await this.m.emit(t, ws.id, action, { ...view, actor_id: c.actorId });
      return view;
    });
  }

  // ------------------------------------------------------------------ comments, activity

  async comment(c: Caller, wsRef: string, projectRef: string, id: string, b: Body) {
    const v = new Checks();
    const body = commentInput(v, b);
    v.done();
    return this.board.write(async (t) => {
      // Comments are allowed on archived cards (a note on why), not in archived projects.
      const { ws, project, card } = await this.card(t, c, wsRef, projectRef, id);
      if (project.archived_at || ws.archived_at) throw conflict("The project is archived", "ARCHIVED");
      const row: cs.CommentRow = { id: prefixedId("cmt"), card_id: card.id, project_id: project.id, author_id: c.actorId, body: body!, created_at: this.m.ctx.clock.iso() };
      await cs.insertComment(t, row);
      await this.board.activity(t, c, project.id, card.id, "comment.created", { comment_id: { from: null, to: row.id } });
      await this.m.emit(t, ws.id, "comment.created", { ...commentView(row), project_id: project.id, actor_id: c.actorId });
      return commentView(row);
    });
  }

  async comments(c: Caller, wsRef: string, projectRef: string, id: string, q: { limit?: number; offset?: number }) {
    const { limit, offset } = offsetPage(q);
    const { card } = await this.card(this.m.ctx.db, c, wsRef, projectRef, id);
    const { total, rows } = await cs.pageComments(this.m.ctx.db, card.id, limit, offset);
    return { data: rows.map(commentView), pagination: pagination(total, limit, offset, rows.length) };
  }

  async activity(c: Caller, wsRef: string, projectRef: string, cardId: string | undefined, q: { action?: string; since?: string; limit?: number; offset?: number }) {
    const { limit, offset } = offsetPage(q);
    const v = new Checks();
    const since = q.since !== undefined ? v.dateTime("since", q.since) : undefined;
    if (q.action !== undefined && !/^[a-z]+\.[a-z_]+$/.test(q.action)) v.fail("action", "an action such as card.moved");
    v.done();
    let projectId: string;
    if (cardId) projectId = (await this.card(this.m.ctx.db, c, wsRef, projectRef, cardId)).project.id;
    else projectId = (await this.board.project(this.m.ctx.db, c, wsRef, projectRef)).project.id;
    const { total, rows } = await cs.pageActivity(this.m.ctx.db, { projectId, cardId, action: q.action, since: since ?? undefined }, limit, offset);
    return { data: rows.map(activityView), pagination: pagination(total, limit, offset, rows.length) };
  }
}
