/**
 * The waitlist service's admin routes under /waitlist/v1/workspaces/{workspace_id}: settings,
 * waitlists, entries. The public routes are public/routes.ts; the workspace webhook routes are
 * mounted by mount() (module.ts webhookScopes).
 */
import { Elysia } from "elysia";
import { principalPlugin } from "../../access/http";
import { callerKey, idempotent } from "../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../access/openapi";
import { requirePrincipal, type PrincipalResolver } from "../../access/principal";
import type { Idempotency } from "../../core/idempotency";
import { noContent } from "../../core/openapi";
import type { EntryService } from "./entries/service";
import { exportCsv } from "./entries/export";
import * as S from "./schemas";
import type { WaitlistService, WaitlistView } from "./waitlists";

const errors = { 400: S.ErrorBody, 401: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody };
const wsParams = S.WorkspaceParams;
const wlParams = S.WaitlistParams;
const entryParams = S.EntryParams;
const WS = "/waitlist/v1/workspaces/:workspace_id";
const WL = `${WS}/waitlists/:waitlist_id`;

export function adminRoutes(svc: { waitlists: WaitlistService; entries: EntryService }, deps: { principals: PrincipalResolver; idempotency: Idempotency }) {
  const { waitlists, entries } = svc;
  const tags = ["Waitlist: waitlists"];
  const etags = ["Waitlist: entries"];
  return new Elysia()
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .get(`${WS}/waitlist/settings`, (c) => waitlists.getSettings(requirePrincipal(c.principal), c.params.workspace_id), {
      params: wsParams,
      response: { 200: S.WorkspaceSettings, ...errors },
      detail: { tags: ["Waitlist: settings"], summary: "Read the workspace's waitlist settings (action waitlist.settings.read)", description: "updated_at is null while no settings were saved." },
    })
    .put(`${WS}/waitlist/settings`, (c) => waitlists.putSettings(requirePrincipal(c.principal), c.params.workspace_id, c.body as Record<string, unknown>, c.meta), {
      params: wsParams,
      body: S.WorkspaceSettingsPut,
      response: { 200: S.WorkspaceSettings, ...errors },
      detail: {
        tags: ["Waitlist: settings"],
        summary: "Change the workspace's waitlist settings (action waitlist.settings.write)",
        description:
          "Cross-service checks (400, one detail per problem): default_sender_domain_id an active sending mail domain of the workspace, default_sender_address on it, " +
          "each template name an existing template, default_auth_app_slug an Auth App of the workspace; notifications_via_mail true requires the sender domain, address and all three templates.",
      },
    })
    .post(`${WS}/waitlists`, (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(deps.idempotency, c, callerKey(p), async () => ({ status: 201, body: await waitlists.create(p, c.params.workspace_id, c.body, c.meta) })) as Promise<WaitlistView>;
    }, {
      params: wsParams,
      body: S.WaitlistCreate,
      response: { 201: S.Waitlist, ...errors, 409: S.ErrorBody },
      detail: { tags, summary: "Create a waitlist, status draft, with its default variant (action waitlist.create)", description: "409 SLUG_TAKEN. Accepts Idempotency-Key (24 h)." },
    })
    .get(`${WS}/waitlists`, (c) => waitlists.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: S.ListQuery,
      response: { 200: S.WaitlistList, ...errors },
      detail: { tags, summary: "List waitlists, newest first (action waitlist.list)" },
    })
    .get(WL, (c) => waitlists.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id), {
      params: wlParams,
      response: { 200: S.Waitlist, ...errors },
      detail: { tags, summary: "Read a waitlist (action waitlist.read)" },
    })
    .patch(WL, (c) => waitlists.update(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.body, c.meta), {
      params: wlParams,
      body: S.WaitlistPatch,
      response: { 200: S.Waitlist, ...errors },
      detail: { tags, summary: "Change display_name, description or settings (merged shallowly) (action waitlist.update)" },
    })
    .delete(WL, async (c) => {
      await waitlists.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.meta);
      c.set.status = 204;
    }, {
      params: wlParams,
      detail: { tags, summary: "Delete a waitlist with its entries and variants (action waitlist.delete)", responses: noContent() },
    })
    .patch(`${WL}/status`, (c) => waitlists.setStatus(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.body.status, c.meta), {
      params: wlParams,
      body: S.StatusBody,
      response: { 200: S.Waitlist, ...errors, 409: S.ErrorBody },
      detail: {
        tags,
        summary: "Change the status (action waitlist.update)",
        description: "draft->open, open<->paused, open|paused->closed, closed->open; others 409 INVALID_STATUS_TRANSITION. Emits waitlist.status_changed.",
      },
    })
    .get(`${WL}/entries`, (c) => entries.list(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.query), {
      params: wlParams,
      query: S.EntryListQuery,
      response: { 200: S.EntryList, ...errors },
      detail: { tags: etags, summary: "List entries (action waitlist.entry.read)", description: "Filters status and q (email or name); sort=position (default) or created_at." },
    })
    .get(`${WL}/entries/count`, (c) => entries.count(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id), {
      params: wlParams,
      response: { 200: S.EntryCount, ...errors },
      detail: { tags: etags, summary: "Count entries by status (action waitlist.entry.read)" },
    })
    .get(`${WL}/entries/export.csv`, async (c) => {
      const p = requirePrincipal(c.principal);
      const { waitlist } = await waitlists.scoped(p, c.params.workspace_id, c.params.waitlist_id, "waitlist.entry.read");
      return exportCsv(waitlists.m.ctx.db, waitlist);
    }, {
      params: wlParams,
      detail: {
        tags: etags,
        summary: "Export every entry as CSV (action waitlist.entry.read)",
        description: "RFC 4180, streamed, oldest first. Cells starting with =, +, -, @, tab or CR get a leading apostrophe (formula injection). Columns: the Waitlist guide (/docs/guides/waitlist), 'Reference'.",
        responses: { 200: { description: "text/csv", content: { "text/csv": { schema: { type: "string" } } } } },
      },
    })
    .get(`${WL}/entries/:entry_id`, (c) => entries.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.entry_id), {
      params: entryParams,
      response: { 200: S.Entry, ...errors },
      detail: { tags: etags, summary: "Read an entry (action waitlist.entry.read)" },
    })
    .patch(`${WL}/entries/:entry_id`, (c) => entries.update(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.entry_id, c.body, c.meta), {
      params: entryParams,
      body: S.EntryPatch,
      response: { 200: S.Entry, ...errors },
      detail: { tags: etags, summary: "Change name, interest or metadata (action waitlist.entry.write)", description: "Emits entry.updated with the changes." },
    })
    .delete(`${WL}/entries/:entry_id`, async (c) => {
      await entries.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.entry_id, c.meta);
      c.set.status = 204;
    }, {
      params: entryParams,
      detail: { tags: etags, summary: "Delete an entry (action waitlist.entry.write); its referral stops counting", responses: noContent() },
    })
    .post(`${WL}/entries/:entry_id/approve`, (c) => entries.decideOne(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.entry_id, "approved", c.meta), {
      params: entryParams,
      response: { 200: S.Entry, ...errors, 409: S.ErrorBody },
      detail: {
        tags: etags,
        summary: "Approve a pending entry (action waitlist.entry.write)",
        description: "409 ENTRY_NOT_PENDING. After commit: the Auth invite (default_auth_app_slug) and the approved mail (notifications_via_mail), retried on failure.",
      },
    })
    .post(`${WL}/entries/:entry_id/reject`, (c) => entries.decideOne(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.entry_id, "rejected", c.meta), {
      params: entryParams,
      response: { 200: S.Entry, ...errors, 409: S.ErrorBody },
      detail: { tags: etags, summary: "Reject a pending entry (action waitlist.entry.write)", description: "409 ENTRY_NOT_PENDING. Its referral stops counting; the rejected mail follows when enabled." },
    })
    .post(`${WL}/entries/bulk`, (c) => entries.bulk(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.body, c.meta), {
      params: wlParams,
      body: S.BulkBody,
      response: { 200: S.BulkResult, ...errors, 409: S.ErrorBody },
      detail: { tags: etags, summary: "Approve or reject many entries at once, all or nothing (action waitlist.entry.write)", description: "entry_ids (1-500) or top: N (first N pending by position). 409 ENTRY_NOT_PENDING if any is decided." },
    });
}
