/**
 * The identity core: what console accounts (services/platform) and App users (services/auth)
 * share, parameterised by realm. Tables, audit vocabulary and the answers the two give on
 * purpose differently stay with each realm, which hands them in.
 */
export { challengeLocked, invalidMfaToken, MfaChallenges, wrongCode, type ChallengeState, type MfaFailure, type MfaRealm } from "./mfa-challenge";
export { factorStatus, MFA_RULES, MfaFactors, type FactorStatus } from "./mfa-factors";
export { invalidCredentials, normaliseIdentifier, provePassword, refuseInactive, type PasswordRealm } from "./password-signin";
export { rotateRefresh, type RefreshTokenStore } from "./refresh-rotation";
export { StrangerLimits } from "./stranger-limits";
export { CONSOLE_PASSWORDS, PASSWORD_MAX, passwordProblem, type PasswordPolicy } from "./passwords";
export { admitFederated, beginFederatedSignin, FederatedSignin, removableIdentity, type OAuthStateRecord } from "./federation";
export { openSession, type SessionRows, type TokenResponse } from "./sessions";
export { invitationHash, issueInvitation, type InvitationSecret } from "./invitations";
