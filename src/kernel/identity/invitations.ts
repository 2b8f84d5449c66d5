/**
 * Invitations, the rule both realms' invitations share (console invitations to a workspace,
 * an App's invites): the secret exists only in what is handed out (the mail, or the one
 * answer that creates it) and only its SHA-256 is stored, so it is looked up by hash; the
 * lifetime is read from one reading of the clock, so expires_at is exactly the TTL after
 * created_at, also on a real clock. Who may accept, how often and what a refusal answers
 * stay with each realm (one 404 for the console, 410 per status for an App).
 */
import type { Clock } from "../../core/clock";
import { hashToken } from "../../core/secrets";

export interface InvitationSecret {
  token: string;
  token_hash: string;
  /** created_at as epoch ms and ISO text, and expires_at (epoch ms): one reading of the clock. */
  nowMs: number;
  created_at: string;
  expires_at: number;
}

/** The stored side of a new invitation's `token`, valid for `ttlMs` from now. */
export function issueInvitation(clock: Clock, token: string, ttlMs: number): InvitationSecret {
  const nowMs = clock.nowMs();
  return { token, token_hash: hashToken(token), nowMs, created_at: new Date(nowMs).toISOString(), expires_at: nowMs + ttlMs };
}

/** The hash an invitation is looked up by. */
export const invitationHash = (token: string) => hashToken(token);
