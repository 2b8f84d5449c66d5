/**
 * Workspace-level waitlist settings (GET/PUT /waitlist/v1/workspaces/{workspace_id}/waitlist/settings).
 *
 * PUT replaces the fields it names (absent fields keep their value; null clears one) and checks
 * the references against the other services: default_sender_domain_id an active sending mail
 * domain of the workspace, default_sender_address an address on it, every template name an
 * existing sendable template, default_auth_app_slug an App of the workspace. With
 * notifications_via_mail true, the sender domain, sender address and the three template names
 * are all required: one 400 lists every missing piece.
 */
import { tx, type Sql } from "../../../core/db";
import { badRequest, type ErrorDetail } from "../../../core/errors";
import type { Bridges } from "../bridges";
import * as store from "./store";
import { settingsView, type WorkspaceSettingsView } from "./views";

export const TEMPLATE_FIELDS = ["welcome_template_name", "approved_template_name", "rejected_template_name"] as const;
const STRING_FIELDS = ["default_sender_domain_id", "default_auth_app_slug", "brand_name", "brand_logo_url", "primary_color", "default_sender_address", ...TEMPLATE_FIELDS] as const;
const EMAIL_RE = /^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/;
const COLOR_RE = /^#[0-9A-Fa-f]{6}$/;

export async function readSettings(db: Sql, workspaceId: string): Promise<WorkspaceSettingsView> {
  return settingsView(workspaceId, await store.settingsOf(db, workspaceId));
}

/** Validates and stores a PUT body; returns the new view. */
export async function putSettings(db: Sql, b: Bridges, workspaceId: string, body: Record<string, unknown>, now: string): Promise<WorkspaceSettingsView> {
  const details: ErrorDetail[] = [];
  const cur = await readSettings(db, workspaceId);
  const next = { ...cur } as WorkspaceSettingsView;
  for (const [k, v] of Object.entries(body)) {
    if ((STRING_FIELDS as readonly string[]).includes(k)) {
      if (v !== null && (typeof v !== "string" || v.trim() === "" || v.length > 500)) details.push({ field: k, reason: "a non-empty string of at most 500 characters, or null" });
      else (next as unknown as Record<string, unknown>)[k] = v === null ? null : (v as string).trim();
    } else if (k === "notifications_via_mail") {
      if (typeof v !== "boolean") details.push({ field: k, reason: "must be a boolean" });
      else next.notifications_via_mail = v;
    } else details.push({ field: k, reason: k === "workspace_id" || k === "updated_at" ? "read-only" : "unknown field" });
  }
  if (details.length) throw badRequest("Invalid waitlist settings", details);

  if (next.primary_color !== null && !COLOR_RE.test(next.primary_color)) details.push({ field: "primary_color", reason: "#RRGGBB" });
  if (next.brand_logo_url !== null && (!URL.canParse(next.brand_logo_url) || !/^https?:$/.test(new URL(next.brand_logo_url).protocol))) {
    details.push({ field: "brand_logo_url", reason: "an absolute http(s) URL" });
  }
  let domainFqdn: string | null = null;
  if (next.default_sender_domain_id !== null) {
    const d = await b.domain(db, workspaceId, next.default_sender_domain_id);
    if (!d) details.push({ field: "default_sender_domain_id", reason: "no such mail domain in this workspace" });
    else if (d.status !== "active" || d.intent === "receive") details.push({ field: "default_sender_domain_id", reason: `the domain must be active for sending (it is ${d.status}, ${d.intent})` });
    else domainFqdn = d.fqdn;
  }
  if (next.default_sender_address !== null) {
    const a = next.default_sender_address.toLowerCase();
    if (!EMAIL_RE.test(a)) details.push({ field: "default_sender_address", reason: "must be an email address" });
    else if (next.default_sender_domain_id === null) details.push({ field: "default_sender_address", reason: "needs default_sender_domain_id" });
    else if (domainFqdn !== null && a.slice(a.lastIndexOf("@") + 1) !== domainFqdn) details.push({ field: "default_sender_address", reason: `must be an address on ${domainFqdn}` });
  }
  for (const f of TEMPLATE_FIELDS) {
    const name = next[f];
    if (name !== null && !(await b.templateExists(db, workspaceId, name))) details.push({ field: f, reason: `no template "${name}" in this workspace` });
  }
  if (next.default_auth_app_slug !== null && !(await b.app(workspaceId, next.default_auth_app_slug))) {
    details.push({ field: "default_auth_app_slug", reason: "no such Auth App in this workspace" });
  }
  if (next.notifications_via_mail) {
    for (const f of ["default_sender_domain_id", "default_sender_address", ...TEMPLATE_FIELDS] as const) {
      if (next[f] === null) details.push({ field: f, reason: "required while notifications_via_mail is true" });
    }
  }
  if (details.length) throw badRequest("Invalid waitlist settings", details);

  await tx(db, async (t) => {
    await store.upsertSettings(t, {
      workspace_id: workspaceId,
      default_sender_domain_id: next.default_sender_domain_id?.toLowerCase() ?? null,
      default_sender_address: next.default_sender_address,
      default_auth_app_slug: next.default_auth_app_slug,
      brand_name: next.brand_name,
      brand_logo_url: next.brand_logo_url,
      primary_color: next.primary_color,
      notifications_via_mail: next.notifications_via_mail ? 1 : 0,
      welcome_template_name: next.welcome_template_name,
      approved_template_name: next.approved_template_name,
      rejected_template_name: next.rejected_template_name,
      updated_at: now,
    });
  });
  return readSettings(db, workspaceId);
}
