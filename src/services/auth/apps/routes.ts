/** App management for platform principals: /auth/v1/apps (auth.app.* actions in the App's workspace). */
import { Elysia } from "elysia";
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent } from "../../../access/idempotent";
import { requirePrincipal } from "../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { noContent } from "../../../core/openapi";
import type { AuthContext } from "../events";
import type { AppService } from "./service";
import { ErrorBody, ListQuery, Pagination, Uuid } from "../schemas";
import { App } from "./schemas";

const tags = ["Auth: apps"];
const idParam = t.Object({ app_id: Uuid() });
const Settings = t.Optional(JsonObject({ description: "Any of the App settings; unknown keys are 400" }));
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export function appRoutes(auth: { apps: AppService; m: Pick<AuthContext, "ctx" | "tenancy"> }) {
  const { apps } = auth;
  return new Elysia({ prefix: "/v1/apps" })
    .use(principalPlugin(auth.m.tenancy.authz))
    .guard(secured(PLATFORM_CALLER))
    .post("", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(auth.m.ctx.idempotency, c, callerKey(p), async () => ({ status: 201, body: await apps.create(p, c.body, c.meta) }));
    }, {
      body: t.Object({
        workspace_id: t.Optional(Uuid("Required for a signed-in user; a workspace API key defaults to its workspace")),
        slug: t.String({ maxLength: 63, description: "3-63 lowercase letters, digits, hyphens; route words like v1 are refused" }),
        display_name: t.Optional(t.String({ maxLength: 200 })),
        displayName: t.Optional(t.String({ maxLength: 200, description: "Alias of display_name" })),
        settings: Settings,
      }),
      response: { 201: App, ...errors, 409: ErrorBody },
      detail: { tags, summary: "Create an App (action auth.app.create); generates its RS256 signing key and publishable key", description: "Accepts Idempotency-Key." },
    })
    .get("", ({ principal, query }) => apps.list(requirePrincipal(principal), query), {
      query: t.Composite([ListQuery, t.Object({ workspace_id: t.Optional(Uuid("Required for a signed-in user; a workspace API key defaults to its workspace")) })]),
      response: { 200: t.Object({ data: t.Array(App), pagination: Pagination }), ...errors },
      detail: { tags, summary: "List a workspace's Apps (action auth.app.list; cursor pages, creation order)" },
    })
    .get("/:app_id", ({ principal, params }) => apps.get(requirePrincipal(principal), params.app_id), {
      params: idParam, response: { 200: App, ...errors }, detail: { tags, summary: "Read an App (action auth.app.read)" },
    })
    .patch("/:app_id", ({ principal, params, body, meta }) => apps.update(requirePrincipal(principal), params.app_id, body, meta), {
      params: idParam,
      body: t.Object({ slug: t.Optional(t.String({ maxLength: 63 })), display_name: t.Optional(t.String({ maxLength: 200 })), displayName: t.Optional(t.String({ maxLength: 200 })), settings: Settings }),
      response: { 200: App, ...errors, 409: ErrorBody },
      detail: { tags, summary: "Update an App's name, slug or settings (action auth.app.update)", description: "Changing the slug changes the issuer: tokens issued before stop verifying." },
    })
    .delete("/:app_id", async ({ principal, params, meta, set }) => {
      await apps.remove(requirePrincipal(principal), params.app_id, meta);
      set.status = 204;
    }, { params: idParam, detail: { tags, summary: "Delete an App with all its users, tenants, keys and logs (action auth.app.delete)", responses: noContent() } })
    .post("/:app_id/signing-keys/rotate", ({ principal, params, meta }) => apps.rotateKey(requirePrincipal(principal), params.app_id, meta), {
      params: idParam,
      response: { 200: t.Object({ kid: t.String(), jwks: t.Object({ keys: t.Array(t.Object({ kid: t.String(), kty: t.String(), alg: t.String(), use: t.String(), n: t.String(), e: t.String() })) }) }), ...errors },
      detail: { tags, summary: "Rotate the signing key (action auth.app.update)", description: "The new key signs from now on; the old one stays in the JWKS until the tokens it signed have expired." },
    })
    .post("/:app_id/publishable-key/rotate", ({ principal, params, meta }) => apps.rotatePublishableKey(requirePrincipal(principal), params.app_id, meta), {
      params: idParam, response: { 200: App, ...errors }, detail: { tags, summary: "Replace the publishable key (action auth.app.update); the old one stops working at once" },
    });
}
