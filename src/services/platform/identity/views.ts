/**
 * A console account (operator routes), an MFA factor and an invitation as the API shows
 * them: typed by their schemas (identity/schemas.ts and, for the account, the root's).
 */
import type { Static } from "@sinclair/typebox";
import { factorStatus } from "../../../kernel/identity";
import type { OperatorAccount } from "../schemas";
import type { Invitation, MfaFactor } from "./schemas";
import type { AccountRow } from "./store/accounts";
import type { InvitationRow } from "./store/invitations";
import type { FactorRow } from "./store/mfa";

export const operatorAccountView = (a: AccountRow): Static<typeof OperatorAccount> => ({
  id: a.id, email: a.email, username: a.username, display_name: a.display_name, status: a.status, is_operator: !!a.is_operator, created_at: a.created_at, updated_at: a.updated_at,
});

export const factorView = (f: FactorRow): Static<typeof MfaFactor> => ({
  id: f.id,
  type: f.type,
  name: f.name,
  status: factorStatus(f),
  created_at: f.created_at,
  confirmed_at: f.confirmed_at,
  disabled_at: f.disabled_at,
});

export const invitationView = (i: InvitationRow): Static<typeof Invitation> => ({
  id: i.id,
  email: i.email,
  role_id: i.role_id,
  role: i.role_name,
  invited_by: i.invited_by,
  created_at: i.created_at,
  expires_at: new Date(i.expires_at).toISOString(),
});
