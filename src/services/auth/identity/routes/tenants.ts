/**
 * Tenants of an App and their members: /{app_slug}/v1/tenants. Callers: a workspace API key
 * (or M2M token of the App) allowed the named auth.tenant.* action.
 */
import { t } from "../../../../core/schema";
import { JsonObject } from "../../../../access/schemas";
import { APP_ADMIN } from "../../../../access/openapi";
import { noContent } from "../../../../core/openapi";
import type { TenantService } from "../tenants";
import { Member, Tenant } from "../schemas";
import { appParams, ErrorBody, ListQuery, Pagination, TenantRef, Uuid } from "../../schemas";
import { adminCredentials, appGroup, appSlugParams, type AppScopeParts } from "../../apps/scope";

const tags = ["Auth: tenants"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const TenantStatus = t.UnionEnum(["active", "suspended", "archived"]);
const tenantParams = appParams([], { tenant_id: TenantRef() });
const memberParams = appParams(["account_id"], { tenant_id: TenantRef() });
// Not t.Record: Elysia coerces a JSON array into an object for it. The service checks the shape.
const Metadata = t.Unknown({ description: "Customer-controlled JSON object, at most 16 KiB of JSON" });

const page = <T extends ReturnType<typeof t.Object>>(item: T) => t.Object({ data: t.Array(item), pagination: Pagination });

export function tenantsRoutes(auth: AppScopeParts & { tenants: TenantService }) {
  const { tenants } = auth;
  return appGroup(auth, APP_ADMIN)
    .get("/tenants", ({ app, request, query }) => tenants.list(app, adminCredentials(request), query), {
      params: appSlugParams,
      query: t.Composite([ListQuery, t.Object({ status: t.Optional(TenantStatus) })]),
      response: { 200: page(Tenant), ...errors },
      detail: { tags, summary: "List tenants (action auth.tenant.read)", description: "Newest first (created_at descending), cursor pages; status filters. 400 for another status." },
    })
    .post("/tenants", async ({ app, request, body, meta, set }) => {
      const r = await tenants.create(app, adminCredentials(request), body, meta);
      set.status = 201;
      return r;
    }, {
      params: appSlugParams,
      body: t.Object({
        display_name: t.String({ maxLength: 200 }),
        slug: t.Optional(t.Nullable(t.String({ maxLength: 63, description: "1-63 of [a-z0-9-] (lower-cased); derived from display_name when omitted" }))),
        metadata: t.Optional(Metadata),
      }),
      response: { 201: Tenant, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Create a tenant (action auth.tenant.create)",
        description: "Without slug, one is derived from display_name (lower case, other characters to hyphens) and a random suffix is added on collision. An explicit slug already used in the App (any case) is 409 SLUG_TAKEN.",
      },
    })
    .get("/tenants/:tenant_id", ({ app, request, params }) => tenants.get(app, adminCredentials(request), params.tenant_id), {
      params: tenantParams,
      response: { 200: Tenant, ...errors },
      detail: { tags, summary: "Read a tenant by UUID or tnt_ display id (action auth.tenant.read)" },
    })
    .patch("/tenants/:tenant_id", ({ app, request, params, body, meta }) => tenants.update(app, adminCredentials(request), params.tenant_id, body, meta), {
      params: tenantParams,
      body: t.Object({
        display_name: t.Optional(t.String({ maxLength: 200 })),
        slug: t.Optional(t.String({ maxLength: 63 })),
        status: t.Optional(TenantStatus),
        metadata: t.Optional(Metadata),
      }),
      response: { 200: Tenant, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Change a tenant (action auth.tenant.update)",
        description: "Any of display_name, slug, status, metadata (replaced as a whole). Leaving active revokes the sessions signed in to the tenant; only active tenants can be signed in to.",
      },
    })
    .delete("/tenants/:tenant_id", async ({ app, request, params, meta, set }) => {
      await tenants.remove(app, adminCredentials(request), params.tenant_id, meta);
      set.status = 204;
    }, {
      params: tenantParams,
      detail: { tags, responses: noContent(), summary: "Delete a tenant (action auth.tenant.delete)", description: "204. Memberships go with it and sessions signed in to it are revoked; the accounts stay." },
    })
    .get("/tenants/:tenant_id/members", ({ app, request, params, query }) => tenants.members(app, adminCredentials(request), params.tenant_id, query), {
      params: tenantParams,
      query: ListQuery,
      response: { 200: page(Member), ...errors },
      detail: { tags, summary: "List a tenant's members (action auth.tenant.read)", description: "Most recently joined first, cursor pages." },
    })
    .post("/tenants/:tenant_id/members", async ({ app, request, params, body, meta, set }) => {
      const r = await tenants.addMember(app, adminCredentials(request), params.tenant_id, body, meta);
      set.status = 201;
      return r;
    }, {
      params: tenantParams,
      body: t.Object({
        accountId: t.Optional(t.Nullable(Uuid("Id of an existing user of the App"))),
        account_id: t.Optional(t.Nullable(Uuid("Alias of accountId"))),
        email: t.Optional(t.Nullable(t.String({ maxLength: 254, description: "Adds the App's user with this email, or creates one (no password) when there is none" }))),
        display_name: t.Optional(t.Nullable(t.String({ maxLength: 200, description: "For an account created inline" }))),
        username: t.Optional(t.Nullable(t.String({ maxLength: 64, description: "For an account created inline; derived from the email when omitted" }))),
        role: t.Optional(t.Nullable(t.String({ description: "Role name of the App: the member's tenant role (trole)" }))),
      }),
      response: { 201: Member, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Add a member (action auth.tenant.members.add)",
        description: "Exactly one of accountId or email. 404 for an accountId that is not a user of this App; 409 ALREADY_MEMBER; 409 TENANT_ARCHIVED.",
      },
    })
    .patch("/tenants/:tenant_id/members/:account_id", ({ app, request, params, body, meta }) => tenants.updateMember(app, adminCredentials(request), params.tenant_id, params.account_id, body, meta), {
      params: memberParams,
      body: t.Object({ role: t.Nullable(t.String({ description: "Role name of the App, or null to clear the tenant role" })) }),
      response: { 200: Member, ...errors },
      detail: { tags, summary: "Change a member's tenant role (action auth.tenant.members.add)", description: "Takes effect in tokens issued from then on (sign-in, refresh)." },
    })
    .delete("/tenants/:tenant_id/members/:account_id", async ({ app, request, params, meta, set }) => {
      await tenants.removeMember(app, adminCredentials(request), params.tenant_id, params.account_id, meta);
      set.status = 204;
    }, {
      params: memberParams,
      detail: { tags, responses: noContent(), summary: "Remove a member (action auth.tenant.members.remove)", description: "204. The member's sessions signed in to this tenant are revoked; the account stays." },
    });
}
