/** Admin routes of a waitlist's variants and analytics (/waitlist/v1/workspaces/{workspace_id}/waitlists/{waitlist_id}/...). */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal, type PrincipalResolver } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import * as S from "../schemas";
import type { VariantService } from "./service";

const errors = { 400: S.ErrorBody, 401: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody };
const wlParams = S.WaitlistParams;
const vParams = S.VariantParams;
const WL = "/waitlist/v1/workspaces/:workspace_id/waitlists/:waitlist_id";
const tags = ["Waitlist: variants and analytics"];

export function variantRoutes(variants: VariantService, deps: { principals: PrincipalResolver }) {
  return new Elysia()
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .get(`${WL}/variants`, (c) => variants.list(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id), {
      params: wlParams,
      response: { 200: S.VariantList, ...errors },
      detail: { tags, summary: "List variants, oldest first (action waitlist.read)" },
    })
    .post(`${WL}/variants`, async (c) => {
      c.set.status = 201;
      return variants.create(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.body, c.meta);
    }, {
      params: wlParams,
      body: S.VariantCreate,
      response: { 201: S.Variant, ...errors, 409: S.ErrorBody },
      detail: { tags, summary: "Add a variant (action waitlist.update)", description: "409 VARIANT_NAME_TAKEN or VARIANT_LIMIT_REACHED (20)." },
    })
    .patch(`${WL}/variants/:variant_id`, (c) => variants.update(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.variant_id, c.body, c.meta), {
      params: vParams,
      body: S.VariantPatch,
      response: { 200: S.Variant, ...errors, 409: S.ErrorBody },
      detail: { tags, summary: "Change a variant (action waitlist.update)" },
    })
    .delete(`${WL}/variants/:variant_id`, async (c) => {
      await variants.remove(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.params.variant_id, c.meta);
      c.set.status = 204;
    }, {
      params: vParams,
      detail: { tags, summary: "Delete a variant (action waitlist.update); entries keep their variant_id", responses: noContent() },
    })
    .get(`${WL}/analytics`, (c) => variants.analytics(requirePrincipal(c.principal), c.params.workspace_id, c.params.waitlist_id, c.query), {
      params: wlParams,
      query: S.AnalyticsQuery,
      response: { 200: S.Analytics, ...errors },
      detail: {
        tags,
        summary: "Sign-ups, decisions, referrals and views per day, per variant (conversion rate), top 10 referrers, utm sources (action waitlist.read)",
        description: "Days are UTC; approvals and rejections count on their decision day; views come from the public GET.",
      },
    });
}
