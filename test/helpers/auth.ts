/**
 * Auth test helpers: an App in a fresh workspace (owner with an all-actions workspace key),
 * and end users signed up through the public API with the App's publishable key.
 */
import { ownerWithKey, type TestApp } from "./app";

let seq = 0;

export interface TestAuthApp {
  id: string;
  slug: string;
  issuer: string;
  publishable_key: string;
  /** Workspace API key allowing every action (also valid for App-admin routes). */
  key: string;
  /** Console session of the workspace owner. */
  session: string;
  workspace: { id: string; slug: string };
  /** Path of an end-user route of this App, e.g. path("/auth/signin"). */
  path(p: string): string;
}

export async function createAuthApp(app: TestApp, settings: Record<string, unknown> = {}, slug = `app-${++seq}-${Date.now().toString(36)}`): Promise<TestAuthApp> {
  const owner = await ownerWithKey(app);
  const r = await app.call("POST", "/auth/v1/apps", { token: owner.token, body: { slug, display_name: `App ${slug}`, settings } });
  if (r.status !== 201) throw new Error(`app create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    id: r.body.id,
    slug,
    issuer: r.body.issuer,
    publishable_key: r.body.publishable_key,
    key: owner.token,
    session: owner.session,
    workspace: owner.ws,
    path: (p: string) => `/auth/${slug}/v1${p}`,
  };
}

export interface TestEndUser {
  username: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
}

/** Signs up an end user with the publishable key; returns credentials and tokens. */
export async function signupEndUser(app: TestApp, a: TestAuthApp, over: Partial<{ username: string; email: string; password: string; display_name: string }> = {}): Promise<TestEndUser> {
  const n = ++seq;
  const u = { username: `user${n}`, email: `user${n}@example.com`, password: "correct horse battery", ...over };
  const r = await app.call("POST", a.path("/auth/signup"), { token: a.publishable_key, body: u });
  if (r.status !== 200) throw new Error(`end-user signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { ...u, access: r.body.access_token, refresh: r.body.refresh_token };
}

/** Decodes a JWT payload without verifying (tests verify separately with jose). */
export const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8"));

/**
 * The App-scoped administrative operations of the served Auth document: every
 * /auth/{app_slug}/v1/ operation that declares the console cookie, with its JSON body schema.
 * Tests that walk them take the document's own list, so an operation added later is covered.
 */
export async function appAdminOperations(app: TestApp): Promise<{ method: string; path: string; schema: any }[]> {
  const doc = (await app.call("GET", "/auth/openapi.json")).body;
  const ops: { method: string; path: string; schema: any }[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith("/auth/{app_slug}/v1/")) continue;
    for (const [method, op] of Object.entries<any>(item)) {
      if (!(op.security ?? []).some((s: object) => "consoleCookie" in s)) continue;
      ops.push({ method: method.toUpperCase(), path, schema: op.requestBody?.content?.["application/json"]?.schema });
    }
  }
  return ops;
}
