/**
 * Workspace API keys the console mints for one console session, for the services whose
 * routes take only API keys (the card board). One key per service and workspace per
 * session: minted on first need, kept in sessionStorage (this tab, gone when it closes) so
 * visits and reloads reuse it, minted again only when it is missing, about to expire or
 * refused (revoked), and revoked when the user signs out. Each key is tied to the account
 * that minted it: another account signing in to the same tab never uses it.
 *
 * A key the user pasted is kept the same way but never revoked: the console did not mint it.
 */
import { api, ApiError, beforeSignOut } from "./api";

export interface KeySpec {
  /** Storage name and the key's name in the API key list. */
  service: string;
  label: string;
  actions: string[];
  hours: number;
}

interface Stored {
  key: string;
  /** The key's id when the console minted it (revoked on sign-out); null for a pasted key. */
  id: string | null;
  workspace_slug: string;
  account: string;
  expires_at: string | null;
}

export interface KeyOwner {
  ws: { id: string; slug: string };
  account: string;
}

const PREFIX = "bunker.session-key.";
/** A key this close to its expiry is replaced rather than used. */
const MARGIN_MS = 10 * 60_000;
const storageName = (spec: KeySpec, wsId: string) => `${PREFIX}${spec.service}.${wsId}`;

function read(name: string): Stored | null {
  try {
    return JSON.parse(sessionStorage.getItem(name) ?? "null") as Stored | null;
  } catch {
    return null;
  }
}

function usable(s: Stored | null, owner: KeyOwner): s is Stored {
  return !!s && s.account === owner.account && (s.expires_at === null || Date.parse(s.expires_at) - Date.now() > MARGIN_MS);
}

/** The key held for this service and workspace, without minting one. */
export function heldKey(spec: KeySpec, owner: KeyOwner): { key: string; minted: boolean } | null {
  const s = read(storageName(spec, owner.ws.id));
  return usable(s, owner) ? { key: s.key, minted: s.id !== null } : null;
}

/** Concurrent first calls of one screen share one mint. */
const minting = new Map<string, Promise<string>>();

/** The session's key for this service and workspace: the held one, or a freshly minted one. */
export function sessionKey(spec: KeySpec, owner: KeyOwner): Promise<string> {
  const held = heldKey(spec, owner);
  if (held) return Promise.resolve(held.key);
  const name = storageName(spec, owner.ws.id);
  let p = minting.get(name);
  if (!p) {
    p = mint(spec, owner, name).finally(() => minting.delete(name));
    minting.set(name, p);
  }
  return p;
}

async function mint(spec: KeySpec, owner: KeyOwner, name: string): Promise<string> {
  const expires = new Date(Date.now() + spec.hours * 3600_000).toISOString();
  const k = await api.post("/platform/v1/workspaces/{workspace_slug}/api-keys", {
    path: { workspace_slug: owner.ws.slug },
    body: {
      name: `${spec.label} (${new Date().toISOString().slice(0, 16).replace("T", " ")})`,
      policy: [{ effect: "allow", actions: spec.actions, resources: ["*"] }],
      expires_at: expires,
    },
  });
  // The key is null only on an idempotent replay, and this request sends no Idempotency-Key.
  const key = k.key as string;
  const stored: Stored = { key, id: k.id, workspace_slug: owner.ws.slug, account: owner.account, expires_at: k.expires_at ?? expires };
  sessionStorage.setItem(name, JSON.stringify(stored));
  return key;
}

/** Keeps a key the user pasted (checked by the caller) for this session. */
export function keepPastedKey(spec: KeySpec, owner: KeyOwner, key: string): void {
  const stored: Stored = { key, id: null, workspace_slug: owner.ws.slug, account: owner.account, expires_at: null };
  sessionStorage.setItem(storageName(spec, owner.ws.id), JSON.stringify(stored));
}

/** Forgets a key the service refused (revoked, expired, or a wrong paste). */
export function dropKey(spec: KeySpec, wsId: string): void {
  sessionStorage.removeItem(storageName(spec, wsId));
}

/** Sign-out: revokes every key the console minted in this tab, then forgets them all. */
async function revokeAll(): Promise<void> {
  const names = Object.keys(sessionStorage).filter((n) => n.startsWith(PREFIX));
  await Promise.all(
    names.map(async (n) => {
      const s = read(n);
      sessionStorage.removeItem(n);
      if (!s?.id) return;
      // A key left by another account (its session ended without a sign-out) may be beyond
      // this one's reach: a refusal leaves it to expire.
      await api.delete("/platform/v1/workspaces/{workspace_slug}/api-keys/{key_id}", { path: { workspace_slug: s.workspace_slug, key_id: s.id } }).catch((e) => {
        if (!(e instanceof ApiError)) throw e;
      });
    }),
  );
}
beforeSignOut(revokeAll);
