/** All SQL of the mail domains part (tables: migrations/0050_mail_domains.sql). */
import type { Sql } from "../../../core/db";
import { dialect, updateById, nextWorkspaceSeq } from "../../../core/store/sql";

export type DomainIntent = "send" | "receive" | "send_receive";
export type DomainStatus = "pending" | "active" | "failed";

export interface DomainRow {
  id: string;
  workspace_id: string;
  seq: number;
  owner_account_id: string | null;
  fqdn: string;
  intent: DomainIntent;
  status: DomainStatus;
  verification_token: string;
  test_token: string;
  test_received_at: string | null;
  dkim_selector: string;
  dkim_public_key: string;
  /** Encrypted (secretBox). */
  dkim_private_key: string;
  dkim_prev_selector: string | null;
  dkim_prev_public_key: string | null;
  dkim_prev_private_key: string | null;
  dns_provider: string | null;
  /** JSON object. */
  dns_check_results: string;
  last_dns_check_at: string | null;
  dns_check_lease_until: string | null;
  verified_at: string | null;
  failed_at: string | null;
  created_at: string;
  updated_at: string;
  /** 1 for the workspace's sandbox domain (sandbox/): active without DNS, never checked, never relayed out. */
  sandbox: number;
}

/** The next seq of the workspace (a counter row: numbers are never reused after a delete). */
export const nextSeq = (t: Sql, workspaceId: string) => nextWorkspaceSeq(t, "mail_domain_seq", workspaceId);

export async function insertDomain(db: Sql, r: DomainRow): Promise<void> {
  await db.run(
    `INSERT INTO mail_domains (id, workspace_id, seq, owner_account_id, fqdn, intent, status, verification_token, test_token, test_received_at,
       dkim_selector, dkim_public_key, dkim_private_key, dkim_prev_selector, dkim_prev_public_key, dkim_prev_private_key, dns_provider,
       dns_check_results, last_dns_check_at, dns_check_lease_until, verified_at, failed_at, created_at, updated_at, sandbox)
     VALUES ($id, $workspace_id, $seq, $owner_account_id, $fqdn, $intent, $status, $verification_token, $test_token, $test_received_at,
       $dkim_selector, $dkim_public_key, $dkim_private_key, $dkim_prev_selector, $dkim_prev_public_key, $dkim_prev_private_key, $dns_provider,
       $dns_check_results, $last_dns_check_at, $dns_check_lease_until, $verified_at, $failed_at, $created_at, $updated_at, $sandbox)`,
    { ...r },
  );
}

const norm = (r: DomainRow | null): DomainRow | null => (r ? { ...r, seq: Number(r.seq), sandbox: Number(r.sandbox) } : null);

export const domainById = async (db: Sql, id: string) => norm(await db.get<DomainRow>("SELECT * FROM mail_domains WHERE id = ?", id));

/** One domain of a workspace; another workspace's id reads as absent. */
export const domainInWorkspace = async (db: Sql, workspaceId: string, id: string) =>
  norm(await db.get<DomainRow>("SELECT * FROM mail_domains WHERE workspace_id = ? AND id = ?", workspaceId, id));

/** The workspace's sandbox domain, if it has one (at most one: a unique index). */
export const sandboxDomain = async (db: Sql, workspaceId: string) =>
  norm(await db.get<DomainRow>("SELECT * FROM mail_domains WHERE workspace_id = ? AND sandbox = 1", workspaceId));

/** True when some workspace's sandbox domain has this name (sandbox names are unique across workspaces). */
export const sandboxFqdnTaken = async (db: Sql, fqdn: string): Promise<boolean> =>
  (await db.get<{ id: string }>("SELECT id FROM mail_domains WHERE fqdn = ? AND sandbox = 1", fqdn)) !== null;

export const domainByFqdn = async (db: Sql, workspaceId: string, fqdn: string) =>
  norm(await db.get<DomainRow>("SELECT * FROM mail_domains WHERE workspace_id = ? AND fqdn = ?", workspaceId, fqdn));

/** Every domain of a workspace, in seq order. */
export const listDomains = async (db: Sql, workspaceId: string): Promise<DomainRow[]> =>
  (await db.all<DomainRow>("SELECT * FROM mail_domains WHERE workspace_id = ? ORDER BY seq", workspaceId)).map((r) => norm(r)!);

export type DomainPatch = Partial<
  Pick<
    DomainRow,
    | "status"
    | "dns_provider"
    | "dns_check_results"
    | "last_dns_check_at"
    | "dns_check_lease_until"
    | "verified_at"
    | "failed_at"
    | "dkim_selector"
    | "dkim_public_key"
    | "dkim_private_key"
    | "dkim_prev_selector"
    | "dkim_prev_public_key"
    | "dkim_prev_private_key"
    | "test_received_at"
  >
>;
const PATCHABLE = [
  "status",
  "dns_provider",
  "dns_check_results",
  "last_dns_check_at",
  "dns_check_lease_until",
  "verified_at",
  "failed_at",
  "dkim_selector",
  "dkim_public_key",
  "dkim_private_key",
  "dkim_prev_selector",
  "dkim_prev_public_key",
  "dkim_prev_private_key",
  "test_received_at",
] as const;

export async function updateDomain(db: Sql, id: string, patch: DomainPatch, updatedAt: string): Promise<void> {
  await updateById(db, "mail_domains", id, patch, PATCHABLE, updatedAt);
}

export const deleteDomain = (db: Sql, id: string): Promise<number> => db.run("DELETE FROM mail_domains WHERE id = ?", id);

/**
 * Claims up to `limit` domains due for the scheduled check (inside transaction t): pending ones
 * last checked at or before `pendingBefore` (or never), active ones at or before `activeBefore`,
 * whose lease is free; the claim holds until `leaseUntil`.
 */
export async function claimDue(t: Sql, o: { pendingBefore: string; activeBefore: string; now: string; leaseUntil: string; limit: number }): Promise<DomainRow[]> {
  const rows = await t.all<DomainRow>(
    `SELECT * FROM mail_domains
      WHERE ((status = 'pending' AND (last_dns_check_at IS NULL OR last_dns_check_at <= ?))
          OR (status = 'active' AND (last_dns_check_at IS NULL OR last_dns_check_at <= ?)))
        AND (dns_check_lease_until IS NULL OR dns_check_lease_until <= ?)
        AND sandbox = 0
      ORDER BY last_dns_check_at, id
      LIMIT ?${dialect(t).skipLocked}`,
    o.pendingBefore,
    o.activeBefore,
    o.now,
    o.limit,
  );
  for (const r of rows) await t.run("UPDATE mail_domains SET dns_check_lease_until = ? WHERE id = ?", o.leaseUntil, r.id);
  return rows.map((r) => norm(r)!);
}

/** Active domains with this name that can send (any workspace filter is the caller's). */
export const activeSendDomain = async (db: Sql, workspaceId: string, fqdn: string) =>
  norm(
    await db.get<DomainRow>(
      "SELECT * FROM mail_domains WHERE workspace_id = ? AND fqdn = ? AND status = 'active' AND intent IN ('send','send_receive')",
      workspaceId,
      fqdn,
    ),
  );
