/**
 * A short flow per service written against the client generated from Bunker's OpenAPI
 * (openapi-typescript + openapi-fetch), the way an API user writes one. `tsc --strict` checks
 * it (client.test.ts), so a document that types a field loosely (an integer as string |
 * number, a query parameter as string, a missing response schema) breaks the build here;
 * then the same code runs against a server.
 */
import createClient from "openapi-fetch";
import type { paths } from "./generated/api";

export interface FlowOptions {
  baseUrl: string;
  fetch?: (request: Request) => Promise<Response>;
  /** A console session (an operator's) and an email domain for fresh accounts. */
  session: string;
  unique: string;
}

/** Throws with the answer when a call did not succeed; returns its typed data. */
function ok<T>(r: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (r.data === undefined) throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}

export async function runFlow(o: FlowOptions): Promise<string[]> {
  const api = createClient<paths>({ baseUrl: o.baseUrl, fetch: o.fetch });
  const steps: string[] = [];
  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  // Platform: a workspace and an API key allowed everything in it.
  const ws = ok(await api.POST("/platform/v1/workspaces", { headers: as(o.session), body: { slug: `client-${o.unique}`, display_name: "Client" } }), "workspace");
  const minted = ok(
    await api.POST("/platform/v1/workspaces/{workspace_slug}/api-keys", {
      params: { path: { workspace_slug: ws.slug } },
      headers: as(o.session),
      body: { name: "client", policy: [{ effect: "allow", actions: ["*"], resources: ["*"] }] },
    }),
    "api key",
  );
  const key: string | null = minted.key;
  if (!key) throw new Error("no key in the first answer");
  const page = ok(await api.GET("/platform/v1/workspaces", { headers: as(key), params: { query: { limit: 10 } } }), "workspaces");
  const more: boolean = page.pagination.has_more;
  steps.push(`platform: workspace ${ws.slug}, key, ${page.data.length} listed (more: ${more})`);

  // Auth: an App, an end user signed up with the publishable key, their profile.
  const app = ok(await api.POST("/auth/v1/apps", { headers: as(key), body: { slug: `client-${o.unique}`, display_name: "Client" } }), "app");
  const signup = ok(
    await api.POST("/auth/{app_slug}/v1/auth/signup", {
      params: { path: { app_slug: app.slug } },
      headers: as(app.publishable_key),
      body: { username: "client_user", email: `user@${o.unique}.example.com`, password: "correct horse battery" },
    }),
    "end-user sign-up",
  );
  const ttl: number = app.settings.access_token_ttl;
  steps.push(`auth: app ${app.slug} (access tokens ${ttl} s), user signed up`);
  if (!("access_token" in signup)) throw new Error("sign-up asked for more than a password");

  // Waitlist, card board, extraction, mail and community: create one thing, list it with a typed limit.
  const wl = ok(await api.POST("/waitlist/v1/workspaces/{workspace_id}/waitlists", { params: { path: { workspace_id: ws.id } }, headers: as(key), body: { slug: "launch", display_name: "Launch" } }), "waitlist");
  const wls = ok(await api.GET("/waitlist/v1/workspaces/{workspace_id}/waitlists", { params: { path: { workspace_id: ws.id }, query: { limit: 5 } }, headers: as(key) }), "waitlists");
  steps.push(`waitlist: ${wl.slug}, ${wls.data.length} listed`);

  const board = ok(await api.POST("/tack/api/v1/workspaces", { headers: as(key), body: { name: `board-${o.unique}` } }), "board workspace");
  const boards = ok(await api.GET("/tack/api/v1/workspaces", { headers: as(key), params: { query: { limit: 10, offset: 0 } } }), "board workspaces");
  const total: number = boards.pagination.total;
  steps.push(`card board: ${board.name}, ${total} in total`);

  const jobs = ok(await api.GET("/trawl/v1/workspaces/{workspace_id}/jobs", { params: { path: { workspace_id: ws.id }, query: { limit: 5 } }, headers: as(key) }), "extraction jobs");
  steps.push(`extraction: ${jobs.data.length} jobs`);

  const template = ok(
    await api.POST("/mail/v1/workspaces/{workspace_id}/templates", { params: { path: { workspace_id: ws.id } }, headers: as(key), body: { name: "welcome", subject: "Hi {{name}}", body_html: "<p>Hi {{name}}</p>" } }),
    "template",
  );
  steps.push(`mail: template ${template.name}`);

  const community = ok(
    await api.POST("/social/v1/workspaces/{workspace_id}/communities", { params: { path: { workspace_id: ws.id } }, headers: as(key), body: { slug: "club", display_name: "Club" } }),
    "community",
  );
  const { actor } = ok(await api.POST("/social/v1/communities/{community_id}/actors", { params: { path: { community_id: community.id } }, headers: as(key), body: { external_id: "u1" } }), "actor");
  const post = ok(await api.POST("/social/v1/communities/{community_id}/posts", { params: { path: { community_id: community.id } }, headers: as(key), body: { actor_id: actor.id, body: "hello" } }), "post");
  steps.push(`community: ${community.slug}, actor, post ${post.id}`);

  // The types refuse what the server refuses: a limit is an integer, not a string.
  // @ts-expect-error limit is typed integer
  await api.GET("/platform/v1/workspaces", { headers: as(key), params: { query: { limit: "10" } } });
  return steps;
}
