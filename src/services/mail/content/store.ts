/** All SQL of the mail content part: brands and templates (migration 0051). */
import type { Sql } from "../../../core/db";

export type TemplateKind = "template" | "layout" | "partial";

export interface BrandRow {
  workspace_id: string;
  /** JSON object of the user-set tokens. */
  raw: string;
  updated_at: string;
}

export interface TemplateRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: TemplateKind;
  subject: string;
  body_html: string;
  body_text: string | null;
  /** JSON or null. */
  variables_schema: string | null;
  /** JSON array. */
  tags: string;
  source: string;
  source_ref: string | null;
  source_synced_at: string | null;
  created_at: string;
  updated_at: string;
}

export const brandOf = (db: Sql, workspaceId: string) => db.get<BrandRow>("SELECT * FROM mail_brands WHERE workspace_id = ?", workspaceId);

export async function putBrand(db: Sql, workspaceId: string, raw: string, now: string): Promise<void> {
  await db.run(
    `INSERT INTO mail_brands (workspace_id, raw, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (workspace_id) DO UPDATE SET raw = excluded.raw, updated_at = excluded.updated_at`,
    workspaceId,
    raw,
    now,
  );
}

export const deleteBrand = (db: Sql, workspaceId: string): Promise<number> => db.run("DELETE FROM mail_brands WHERE workspace_id = ?", workspaceId);

export const templateByName = (db: Sql, workspaceId: string, name: string) =>
  db.get<TemplateRow>("SELECT * FROM mail_templates WHERE workspace_id = ? AND name = ?", workspaceId, name);

/** Every layout and partial of a workspace (what a render may include). */
export const includables = (db: Sql, workspaceId: string) =>
  db.all<TemplateRow>("SELECT * FROM mail_templates WHERE workspace_id = ? AND kind IN ('layout', 'partial') ORDER BY name", workspaceId);

export async function insertTemplate(db: Sql, r: TemplateRow, tags: string[]): Promise<void> {
  await db.run(
    `INSERT INTO mail_templates (id, workspace_id, name, kind, subject, body_html, body_text, variables_schema, tags, source, source_ref, source_synced_at, created_at, updated_at)
     VALUES ($id, $workspace_id, $name, $kind, $subject, $body_html, $body_text, $variables_schema, $tags, $source, $source_ref, $source_synced_at, $created_at, $updated_at)`,
    { ...r },
  );
  await setTags(db, r.id, r.workspace_id, tags);
}

export async function replaceTemplate(
  db: Sql,
  id: string,
  workspaceId: string,
  r: Pick<TemplateRow, "subject" | "body_html" | "body_text" | "variables_schema" | "tags" | "updated_at">,
  tags: string[],
): Promise<void> {
  await db.run(
    `UPDATE mail_templates SET subject = $subject, body_html = $body_html, body_text = $body_text, variables_schema = $variables_schema, tags = $tags, updated_at = $updated_at
     WHERE id = $id`,
    { ...r, id },
  );
  await db.run("DELETE FROM mail_template_tags WHERE template_id = ?", id);
  await setTags(db, id, workspaceId, tags);
}

async function setTags(db: Sql, id: string, workspaceId: string, tags: string[]): Promise<void> {
  for (const tag of tags) await db.run("INSERT INTO mail_template_tags (template_id, workspace_id, tag) VALUES (?, ?, ?)", id, workspaceId, tag);
}

export async function deleteTemplate(db: Sql, id: string): Promise<number> {
  await db.run("DELETE FROM mail_template_tags WHERE template_id = ?", id);
  return db.run("DELETE FROM mail_templates WHERE id = ?", id);
}

export interface TemplateFilter {
  workspaceId: string;
  kind: TemplateKind | null;
  tags: string[];
  /** LIKE pattern (escaped with backslash, lower-cased) or null. */
  pattern: string | null;
  after: string | null;
  limit: number;
}

/** Byte order of names on both engines (PostgreSQL's default collation ignores - and _). */
const byteOrder = (db: Sql) => (db.engine === "postgres" ? ' COLLATE "C"' : "");

/** Name ascending (byte order), keyset on name. */
export function listTemplates(db: Sql, f: TemplateFilter): Promise<TemplateRow[]> {
  const where = ["t.workspace_id = ?"];
  const args: (string | number)[] = [f.workspaceId];
  if (f.kind) {
    where.push("t.kind = ?");
    args.push(f.kind);
  }
  if (f.tags.length) {
    where.push(`EXISTS (SELECT 1 FROM mail_template_tags g WHERE g.template_id = t.id AND g.tag IN (${f.tags.map(() => "?").join(", ")}))`);
    args.push(...f.tags);
  }
  if (f.pattern !== null) {
    where.push("lower(t.name) LIKE ? ESCAPE '\\'");
    args.push(f.pattern);
  }
  if (f.after !== null) {
    where.push(`t.name${byteOrder(db)} > ?`);
    args.push(f.after);
  }
  args.push(f.limit);
  return db.all<TemplateRow>(`SELECT t.* FROM mail_templates t WHERE ${where.join(" AND ")} ORDER BY t.name${byteOrder(db)} LIMIT ?`, ...args);
}

export async function tagsOf(db: Sql, workspaceId: string): Promise<string[]> {
  return (await db.all<{ tag: string }>(`SELECT DISTINCT tag${byteOrder(db)} AS tag FROM mail_template_tags WHERE workspace_id = ? ORDER BY 1`, workspaceId)).map((r) => r.tag);
}
