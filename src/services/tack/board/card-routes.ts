/**
 * Routes of cards, comments and activity under
 * /tack/api/v1/workspaces/{workspace}/projects/{project}:
 *
 *   /cards                       GET list (filters, q, offset pages), POST create
 *   /cards/batch-move            POST (up to 100 moves, atomic; a batch operation for rate limits)
 *   /cards/{card_id}             GET, PATCH, DELETE (archive)
 *   /cards/{card_id}/move        POST {list, position}
 *   /cards/{card_id}/complete    POST (idempotent)
 *   /cards/{card_id}/reopen      POST
 *   /cards/{card_id}/comments    GET (oldest first), POST (append-only)
 *   /cards/{card_id}/activity    GET
 *   /activity                    GET (the project's)
 */
import { Elysia } from "elysia";
import { secured } from "../../../access/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { BATCH_MOVE_MAX, type Cards } from "./cards";
import { boardCaller } from "./guard";
import { BOARD_PREFIX, CARD, PROJECT } from "./paths";
import { API_KEY_CALLER, as, IDEMPOTENCY_NOTE, idempotentAs, RATE_NOTE, readErrors, writeErrors } from "./routes";
import * as S from "./schemas";

export function cardRoutes(cards: Cards, deps: ServiceDeps) {
  const board = cards.board;
  const tags = ["Card board: cards, comments, activity"];
  const d = (summary: string, description = "") => ({ tags, summary, description: `${description} ${RATE_NOTE}`.trim() });
  const [proj, card] = [PROJECT, CARD];
  type P = { workspace_id: string; project: string };
  const w = (p: P) => [p.workspace_id, p.project] as const;

  return new Elysia({ prefix: BOARD_PREFIX })
    .use(boardCaller(deps))
    .guard(secured(API_KEY_CALLER))
    .get(`${proj}/cards`, (c) => as(board, c.principal, "tack.card.read", (k) => cards.list(k, ...w(c.params), c.query)), {
      params: S.ProjectParams,
      query: S.CardListQuery,
      response: { 200: S.PageOf(S.Card), ...readErrors },
      detail: d(
        "List cards with filters (action tack.card.read)",
        "Filters: list (name or id), label (repeatable, all must match; unknown: 400), priority, assignee, completed, q (full text over title and body: " +
          "every word must match as a prefix, ranked by relevance). Without q: board order (list position, then card position). Archived cards with include_archived=true.",
      ),
    })
    .post(`${proj}/cards`, (c) => idempotentAs(board, c, "tack.card.write", 201, (k) => cards.create(k, ...w(c.params), c.body)), {
      params: S.ProjectParams,
      body: S.CardCreate,
      response: { 201: S.Card, ...writeErrors },
      detail: d("Create a card (action tack.card.write); 201", `In list (default: the first list) at position (default: the end); the cards after it shift. Emits card.created. ${IDEMPOTENCY_NOTE}`),
    })
    .post(`${proj}/cards/batch-move`, (c) => idempotentAs(board, c, "tack.card.write", 200, (k) => cards.batchMove(k, ...w(c.params), c.body)), {
      params: S.ProjectParams,
      body: S.BatchMove,
      response: { 200: S.BatchMoved, ...writeErrors },
      detail: d(
        `Move up to ${BATCH_MOVE_MAX} cards in one transaction (action tack.card.write)`,
        "Applied in order; every item is checked first: one invalid item answers 400 with per-item details (moves[i].field) and nothing moves. Counts as one batch operation. Emits card.moved per moved card. " + IDEMPOTENCY_NOTE,
      ),
    })
    .get(card, (c) => as(board, c.principal, "tack.card.read", (k) => cards.get(k, ...w(c.params), c.params.card_id)), {
      params: S.CardParams,
      response: { 200: S.Card, ...readErrors },
      detail: d("Read a card (action tack.card.read)", "Archived cards still answer."),
    })
    .patch(card, (c) => as(board, c.principal, "tack.card.write", (k) => cards.update(k, ...w(c.params), c.params.card_id, c.body)), {
      params: S.CardParams,
      body: S.CardPatch,
      response: { 200: S.Card, ...writeErrors },
      detail: d(
        "Update a card (action tack.card.write)",
        "labels replaces the set. list and position move it (as POST .../move). Activity card.updated with changes {field: {from, to}}; emits card.updated (and card.moved). 409 ARCHIVED for archived cards.",
      ),
    })
    .delete(card, (c) => as(board, c.principal, "tack.card.write", (k) => cards.archive(k, ...w(c.params), c.params.card_id)), {
      params: S.CardParams,
      response: { 200: S.Card, ...writeErrors },
      detail: d("Archive a card (action tack.card.write)", "Soft: archived_at set; it leaves the list's order (the cards after it move up). Idempotent. Emits card.archived."),
    })
    .post(`${card}/move`, (c) => as(board, c.principal, "tack.card.write", (k) => cards.move(k, ...w(c.params), c.params.card_id, c.body)), {
      params: S.CardParams,
      body: S.CardMove,
      response: { 200: S.Card, ...writeErrors },
      detail: d("Move a card to a list and position (action tack.card.write)", "position is a target index, clamped to the end. Emits card.moved (from_list, to_list, from_position, to_position)."),
    })
    .post(`${card}/complete`, (c) => as(board, c.principal, "tack.card.write", (k) => cards.complete(k, ...w(c.params), c.params.card_id, true)), {
      params: S.CardParams,
      response: { 200: S.Card, ...writeErrors },
      detail: d("Mark a card complete (action tack.card.write)", "Sets completed_at; idempotent (a completed card is returned as is). Emits card.completed."),
    })
    .post(`${card}/reopen`, (c) => as(board, c.principal, "tack.card.write", (k) => cards.complete(k, ...w(c.params), c.params.card_id, false)), {
      params: S.CardParams,
      response: { 200: S.Card, ...writeErrors },
      detail: d("Reopen a completed card (action tack.card.write)", "Clears completed_at; idempotent. Emits card.reopened."),
    })
    .get(`${card}/comments`, (c) => as(board, c.principal, "tack.comment.read", (k) => cards.comments(k, ...w(c.params), c.params.card_id, c.query)), {
      params: S.CardParams,
      query: S.PageQuery,
      response: { 200: S.PageOf(S.Comment), ...readErrors },
      detail: d("List a card's comments, oldest first (action tack.comment.read)"),
    })
    .post(`${card}/comments`, (c) => idempotentAs(board, c, "tack.comment.write", 201, (k) => cards.comment(k, ...w(c.params), c.params.card_id, c.body)), {
      params: S.CardParams,
      body: S.CommentCreate,
      response: { 201: S.Comment, ...writeErrors },
      detail: d("Comment on a card (action tack.comment.write); 201", `Append-only markdown (no edit or delete). The author is the calling key. Emits comment.created. ${IDEMPOTENCY_NOTE}`),
    })
    .get(`${card}/activity`, (c) => as(board, c.principal, "tack.activity.read", (k) => cards.activity(k, ...w(c.params), c.params.card_id, c.query)), {
      params: S.CardParams,
      query: S.ActivityQuery,
      response: { 200: S.PageOf(S.Activity), ...readErrors },
      detail: d("A card's activity, newest first (action tack.activity.read)", "Filters action and since."),
    })
    .get(`${proj}/activity`, (c) => as(board, c.principal, "tack.activity.read", (k) => cards.activity(k, ...w(c.params), undefined, c.query)), {
      params: S.ProjectParams,
      query: S.ActivityQuery,
      response: { 200: S.PageOf(S.Activity), ...readErrors },
      detail: d("A project's activity, newest first (action tack.activity.read)", "Every mutation of the project, its lists and cards; filters action and since."),
    });
}
