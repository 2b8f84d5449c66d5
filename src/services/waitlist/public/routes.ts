/**
 * The public routes (no credential) under /waitlist/v1/waitlists/{workspace_slug}/{waitlist_slug}:
 * the configuration GET and the sign-up POST, each with an OPTIONS preflight. CORS follows the
 * waitlist's settings.allowed_origins: ["*"] answers Access-Control-Allow-Origin: *; a list
 * echoes an Origin on it (with Vary: Origin) and leaves others without the header (a browser
 * then refuses to read the answer; a sign-up from such an Origin is 403 ORIGIN_NOT_ALLOWED).
 */
import { Elysia } from "elysia";
import { requestMeta } from "../../../access/http";
import type { EntryService } from "../entries";
import type { PublicConfig } from "./config";
import * as S from "../schemas";
import type { WaitlistSettings } from "../settings";
import { signup } from "./signup";

const BASE = "/waitlist/v1/waitlists/:workspace_slug/:waitlist_slug";
const params = S.PublicParams;
const tags = ["Waitlist: public"];
const errors = { 400: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody };
export const PUBLIC_MAX_AGE = 30;

function cors(set: { headers: Record<string, string | number> }, s: WaitlistSettings, origin: string | null): void {
  if (s.allowed_origins.includes("*")) set.headers["access-control-allow-origin"] = "*";
  else {
    set.headers.vary = "Origin";
    if (origin !== null && s.allowed_origins.includes(origin)) set.headers["access-control-allow-origin"] = origin;
  }
}

export function publicRoutes(entries: EntryService, config: PublicConfig) {
  const preflight = async (c: { params: { workspace_slug: string; waitlist_slug: string }; request: Request; set: { status?: number | string; headers: Record<string, string | number> } }) => {
    const { settings } = await config.get(c.params.workspace_slug, c.params.waitlist_slug, null, false);
    cors(c.set, settings, c.request.headers.get("origin"));
    c.set.headers["access-control-allow-methods"] = "GET, POST, OPTIONS";
    c.set.headers["access-control-allow-headers"] = "content-type";
    c.set.headers["access-control-max-age"] = "600";
    c.set.status = 204;
  };
  const preflightDetail = (what: string) => ({ tags, summary: `CORS preflight of ${what}`, responses: { 204: { description: "Allowed methods and headers; Access-Control-Allow-Origin per settings.allowed_origins" } } });
  return new Elysia()
    .get(BASE, async (c) => {
      const x = await config.get(c.params.workspace_slug, c.params.waitlist_slug, c.query.visitor ?? null);
      // The serialised answer is cached with the configuration (the hot path of a landing page).
      const headers: Record<string, string> = { "content-type": "application/json", "cache-control": `public, max-age=${PUBLIC_MAX_AGE}` };
      const origin = c.request.headers.get("origin");
      if (x.settings.allowed_origins.includes("*")) headers["access-control-allow-origin"] = "*";
      else {
        headers.vary = "Origin";
        if (origin !== null && x.settings.allowed_origins.includes(origin)) headers["access-control-allow-origin"] = origin;
      }
      return new Response(x.json, { headers });
    }, {
      params,
      query: S.PublicQuery,
      response: { 200: S.PublicWaitlist, 404: S.ErrorBody },
      detail: {
        tags,
        summary: "Public waitlist configuration (no credential)",
        description: "Draft waitlists answer 404. Cache-Control: public, max-age=30. ?visitor=<token> keeps a visitor on one variant.",
        security: [],
      },
    })
    .options(BASE, preflight, { params, detail: preflightDetail("the configuration") })
    .post(`${BASE}/entries`, async (c) => {
      const origin = c.request.headers.get("origin");
      const { settings, waitlist } = await config.get(c.params.workspace_slug, c.params.waitlist_slug, null, false);
      cors(c.set, settings, origin);
      const meta = requestMeta(c.request);
      const r = await signup(entries, waitlist, settings, c.body, { ip: meta.ip, origin, referer: c.request.headers.get("referer") });
      c.set.status = r.status;
      return r.body;
    }, {
      params,
      body: S.SignupBody,
      response: { 200: S.PublicEntry, 201: S.PublicEntry, ...errors, 409: S.ErrorBody, 429: S.ErrorBody },
      detail: {
        tags,
        summary: "Join a waitlist (no credential)",
        description:
          "201 new entry; 200 when the email is already on the list (its public view, nothing changes). 400 invalid email, disposable domain, honeypot `website` filled, " +
          "custom fields; 403 ORIGIN_NOT_ALLOWED; 404 unknown or draft; 409 WAITLIST_CLOSED (paused or closed), WAITLIST_FULL; 429 RATE_LIMITED with Retry-After.",
        security: [],
      },
    })
    .options(`${BASE}/entries`, preflight, { params, detail: preflightDetail("sign-up") });
}
