/**
 * SQL of cards, card labels, comments, activity and full-text search (migration 0060).
 * Full text is engine-specific: SQLite keeps an FTS5 table (rowid = the card's search_id,
 * prefix queries, bm25 ranking with the title weighted 4x), PostgreSQL a tsvector table
 * under a GIN index (to_tsquery prefix terms, ts_rank with the title weighted A). Both take
 * the query as a list of words (letters and digits only), each a prefix, all required.
 */
import type { Sql, SqlValue } from "../../../core/store/sql";

export interface CardRow {
  id: string;
  workspace_id: string;
  project_id: string;
  list_id: string;
  search_id: number;
  title: string;
  body: string;
  priority: string;
  position: number;
  assignees: string;
  due_at: string | null;
  completed_at: string | null;
  metadata: string;
  archived_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface CommentRow {
  id: string;
  card_id: string;
  project_id: string;
  author_id: string;
  body: string;
  created_at: string;
}

export interface ActivityRow {
  id: string;
  project_id: string;
  card_id: string | null;
  actor_id: string;
  action: string;
  changes: string;
  timestamp: string;
}

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

// ------------------------------------------------------------------ cards

/** Drops the search rows of cards about to go with their list or workspace (foreign keys don't reach them). */
export async function dropSearchRows(db: Sql, where: { listId?: string; ownerWorkspaceId?: string }): Promise<void> {
  const cards = where.listId
    ? { sql: "SELECT search_id FROM tack_cards WHERE list_id = ?", arg: where.listId }
    : { sql: "SELECT c.search_id FROM tack_cards c JOIN tack_workspaces w ON w.id = c.workspace_id WHERE w.owner_workspace_id = ?", arg: where.ownerWorkspaceId! };
  const key = db.engine === "postgres" ? "search_id" : "rowid";
  await db.run(`DELETE FROM tack_cards_fts WHERE ${key} IN (${cards.sql})`, cards.arg);
}

/** The columns an insert sets from the row (search_id and position come from the insert itself). */
const INSERT_COLUMNS = [
  "id", "workspace_id", "project_id", "list_id", "title", "body", "priority", "assignees",
  "due_at", "completed_at", "metadata", "archived_at", "created_by", "created_at", "updated_at",
] as const;

/** A card to insert: the insert gives its search_id, and its position when null (the end of its list). */
export type NewCard = Omit<CardRow, "search_id" | "position"> & { position: number | null };

/**
 * The search_id of a new card: PostgreSQL's sequence; SQLite (one writer at a time) one above
 * the highest key of the FTS table and of the cards inside the write transaction (the cards
 * cover index rows still queued for the commit, the FTS table keys whose card is gone), so a
 * key is never reused.
 */
const NEXT_SEARCH_ID = {
  postgres: "nextval('tack_cards_search_seq')",
  sqlite: "(SELECT MAX(COALESCE((SELECT MAX(rowid) FROM tack_cards_fts), 0), COALESCE((SELECT MAX(search_id) FROM tack_cards), 0)) + 1)",
};
/** The end of a list: one above the highest active position, through the partial index (see activeCardCount). */
const LIST_END = "COALESCE((SELECT position + 1 FROM tack_cards WHERE list_id = ? AND archived_at IS NULL ORDER BY position DESC LIMIT 1), 0)";
// The four statements (engine x position given or not), written once: the id and the end of
// the list are read by the insert itself (RETURNING), not by statements of their own.
const insertSql = (engine: "sqlite" | "postgres", atEnd: boolean) =>
  `INSERT INTO tack_cards (search_id, position, ${INSERT_COLUMNS.join(", ")}) VALUES (${NEXT_SEARCH_ID[engine]}, ${atEnd ? LIST_END : "?"}, ${marks(INSERT_COLUMNS.length)}) RETURNING search_id, position`;
const INSERT_SQL = { sqlite: [insertSql("sqlite", false), insertSql("sqlite", true)], postgres: [insertSql("postgres", false), insertSql("postgres", true)] } as const;

/**
 * Inserts the card and answers its row; its full-text row is written just before the commit
 * (t.beforeCommit): FTS5 flushes its pending index data at every savepoint, and the SQLite
 * engine runs each transaction of a commit group in one, so a row written here would cost an
 * index segment per card; queued, a group's rows make one. Index writes of a card stay in the
 * order they were made (insert, then any re-index), and search reads committed data only.
 */
export async function insertCard(t: Sql, card: NewCard): Promise<CardRow> {
  const atEnd = card.position === null;
  const got = (await t.get<{ search_id: number; position: number }>(
    INSERT_SQL[t.engine][atEnd ? 1 : 0],
    atEnd ? card.list_id : card.position,
    ...INSERT_COLUMNS.map((c) => card[c] as SqlValue),
  ))!;
  const row: CardRow = { ...card, search_id: Number(got.search_id), position: Number(got.position) };
  const { search_id, title, body } = row;
  t.beforeCommit((h) =>
    h.engine === "postgres"
      ? h.run("INSERT INTO tack_cards_fts (search_id, doc) VALUES (?, setweight(to_tsvector('simple', ?), 'A') || setweight(to_tsvector('simple', ?), 'B'))", search_id, title, body)
      : h.run("INSERT INTO tack_cards_fts (rowid, title, body) VALUES (?, ?, ?)", search_id, title, body),
  );
  return row;
}

/** Re-indexes a card's title and body (before the commit, after any index write queued earlier: see insertCard). */
export async function reindexCard(t: Sql, searchId: number, title: string, body: string): Promise<void> {
  t.beforeCommit((h) =>
    h.engine === "postgres"
      ? h.run("UPDATE tack_cards_fts SET doc = setweight(to_tsvector('simple', ?), 'A') || setweight(to_tsvector('simple', ?), 'B') WHERE search_id = ?", title, body, searchId)
      : h.run("UPDATE tack_cards_fts SET title = ?, body = ? WHERE rowid = ?", title, body, searchId),
  );
}

export const cardById = (db: Sql, projectId: string, id: string) => db.get<CardRow>("SELECT * FROM tack_cards WHERE project_id = ? AND id = ?", projectId, id);

export async function cardsByIds(db: Sql, projectId: string, ids: string[]): Promise<CardRow[]> {
  if (!ids.length) return [];
  return db.all<CardRow>(`SELECT * FROM tack_cards WHERE project_id = ? AND id IN (${marks(ids.length)})`, projectId, ...ids);
}

/** Number of active (not archived) cards of a list: the next free position. */
export async function activeCardCount(db: Sql, listId: string): Promise<number> {
  // The highest position through the partial index: O(log n), unlike COUNT(*).
  const row = await db.get<{ position: number }>("SELECT position FROM tack_cards WHERE list_id = ? AND archived_at IS NULL ORDER BY position DESC LIMIT 1", listId);
  return row ? Number(row.position) + 1 : 0;
}

/** Shifts the active cards of a list at positions [from, to] by delta. */
export const shiftCards = (db: Sql, listId: string, from: number, to: number, delta: number) =>
  db.run("UPDATE tack_cards SET position = position + ? WHERE list_id = ? AND archived_at IS NULL AND position >= ? AND position <= ?", delta, listId, from, to);

const CARD_PATCH = ["list_id", "title", "body", "priority", "position", "assignees", "due_at", "completed_at", "metadata", "archived_at"] as const;

export function updateCard(db: Sql, id: string, patch: Partial<CardRow>, at: string): Promise<number> {
  const sets: string[] = [];
  const values: SqlValue[] = [];
  for (const k of CARD_PATCH) {
    if (patch[k] === undefined) continue;
    sets.push(`${k} = ?`);
    values.push(patch[k] as SqlValue);
  }
  sets.push("updated_at = ?");
  return db.run(`UPDATE tack_cards SET ${sets.join(", ")} WHERE id = ?`, ...values, at, id);
}

export const activeCardsInList = async (db: Sql, listId: string) =>
  Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tack_cards WHERE list_id = ? AND archived_at IS NULL", listId))!.n);

// ------------------------------------------------------------------ card labels

export async function setCardLabels(db: Sql, cardId: string, labelIds: string[], replace: boolean): Promise<void> {
  if (replace) await db.run("DELETE FROM tack_card_labels WHERE card_id = ?", cardId);
  if (!labelIds.length) return;
  await db.run(`INSERT INTO tack_card_labels (card_id, label_id) VALUES ${labelIds.map(() => "(?, ?)").join(", ")}`, ...labelIds.flatMap((l) => [cardId, l]));
}

/** Label names of each card, alphabetical. */
export async function labelNamesOf(db: Sql, cardIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(cardIds.map((id) => [id, []]));
  if (!cardIds.length) return out;
  const rows = await db.all<{ card_id: string; name: string }>(
    `SELECT cl.card_id, l.name FROM tack_card_labels cl JOIN tack_labels l ON l.id = cl.label_id WHERE cl.card_id IN (${marks(cardIds.length)}) ORDER BY l.name`,
    ...cardIds,
  );
  for (const r of rows) out.get(r.card_id)!.push(r.name);
  return out;
}

// ------------------------------------------------------------------ search

export interface CardFilter {
  projectId: string;
  includeArchived: boolean;
  listId?: string;
  labelIds: string[];
  priority?: string;
  assignee?: string;
  completed?: boolean;
  /** Words (letters and digits), each matched as a prefix; all must match. */
  words: string[];
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One page of a project's cards: ranked by relevance with words, else in board order (list, then position). */
export async function searchCards(db: Sql, f: CardFilter, limit: number, offset: number): Promise<{ total: number; rows: CardRow[] }> {
  const where: string[] = ["c.project_id = ?"];
  const params: SqlValue[] = [f.projectId];
  if (!f.includeArchived) where.push("c.archived_at IS NULL");
  if (f.listId) where.push("c.list_id = ?"), params.push(f.listId);
  for (const l of f.labelIds) where.push("EXISTS (SELECT 1 FROM tack_card_labels cl WHERE cl.card_id = c.id AND cl.label_id = ?)"), params.push(l);
  if (f.priority) where.push("c.priority = ?"), params.push(f.priority);
  if (f.assignee) where.push("c.assignees LIKE ? ESCAPE '\\'"), params.push(`%${likeEscape(JSON.stringify(f.assignee))}%`);
  if (f.completed !== undefined) where.push(f.completed ? "c.completed_at IS NOT NULL" : "c.completed_at IS NULL");

  if (!f.words.length) {
    const cond = where.join(" AND ");
    const total = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM tack_cards c WHERE ${cond}`, ...params))!.n);
    const rows = await db.all<CardRow>(
      `SELECT c.* FROM tack_cards c JOIN tack_lists l ON l.id = c.list_id WHERE ${cond} ORDER BY l.position, c.archived_at IS NOT NULL, c.position, c.id LIMIT ? OFFSET ?`,
      ...params, limit, offset,
    );
    return { total, rows };
  }
  if (db.engine === "postgres") {
    const query = f.words.map((w) => `${w}:*`).join(" & ");
    const cond = `f.doc @@ to_tsquery('simple', ?) AND ${where.join(" AND ")}`;
    const from = "tack_cards_fts f JOIN tack_cards c ON c.search_id = f.search_id";
    const total = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${from} WHERE ${cond}`, query, ...params))!.n);
    const rows = await db.all<CardRow>(
      `SELECT c.* FROM ${from} WHERE ${cond} ORDER BY ts_rank(f.doc, to_tsquery('simple', ?)) DESC, c.id LIMIT ? OFFSET ?`,
      query, ...params, query, limit, offset,
    );
    return { total, rows };
  }
  const query = f.words.map((w) => `"${w}"*`).join(" ");
  const cond = `tack_cards_fts MATCH ? AND ${where.join(" AND ")}`;
  // CROSS JOIN: SQLite keeps the FTS table outermost (the matches drive; never a scan of the
  // project's cards probing the index one by one). One ranked pass over the matches gives
  // both the total and the page's ids (ranking needs every match anyway); the page's rows
  // are read by id after.
  const from = "tack_cards_fts CROSS JOIN tack_cards c ON c.search_id = tack_cards_fts.rowid";
  const ranked = await db.all<{ id: string }>(`SELECT c.id FROM ${from} WHERE ${cond} ORDER BY bm25(tack_cards_fts, 4.0, 1.0), c.id`, query, ...params);
  const page = ranked.slice(offset, offset + limit).map((r) => r.id);
  const rows = page.length ? await db.all<CardRow>(`SELECT * FROM tack_cards WHERE id IN (${marks(page.length)})`, ...page) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { total: ranked.length, rows: page.map((id) => byId.get(id)!) };
}

// ------------------------------------------------------------------ comments

export const insertComment = (db: Sql, r: CommentRow) =>
  db.run("INSERT INTO tack_comments (id, card_id, project_id, author_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?)", r.id, r.card_id, r.project_id, r.author_id, r.body, r.created_at);

export async function pageComments(db: Sql, cardId: string, limit: number, offset: number) {
  const total = Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tack_comments WHERE card_id = ?", cardId))!.n);
  const rows = await db.all<CommentRow>("SELECT * FROM tack_comments WHERE card_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?", cardId, limit, offset);
  return { total, rows };
}

// ------------------------------------------------------------------ activity

export const insertActivity = (db: Sql, r: ActivityRow) =>
  db.run("INSERT INTO tack_activity (id, project_id, card_id, actor_id, action, changes, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)", r.id, r.project_id, r.card_id, r.actor_id, r.action, r.changes, r.timestamp);

export interface ActivityFilter {
  projectId: string;
  cardId?: string;
  action?: string;
  since?: string;
}

/** Newest first. */
export async function pageActivity(db: Sql, f: ActivityFilter, limit: number, offset: number) {
  const where = ["project_id = ?"];
  const params: SqlValue[] = [f.projectId];
  if (f.cardId) where.push("card_id = ?"), params.push(f.cardId);
  if (f.action) where.push("action = ?"), params.push(f.action);
  if (f.since) where.push("timestamp >= ?"), params.push(f.since);
  const cond = where.join(" AND ");
  const total = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM tack_activity WHERE ${cond}`, ...params))!.n);
  const rows = await db.all<ActivityRow>(`SELECT * FROM tack_activity WHERE ${cond} ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?`, ...params, limit, offset);
  return { total, rows };
}
