/**
 * The waitlist service's instance settings (environment variables, docs/operations.md
 * "Configuration"); a waitlist's own settings are settings.ts.
 */
import { int, type SettingValues } from "../../settings";

export const WAITLIST_ENV_SETTINGS = {
  signupsPerIpPerMinute: int("WAITLIST_SIGNUPS_PER_IP_PER_MINUTE", 20, 1, 1_000_000, "Public sign-ups one client address may make per waitlist per minute"),
};

export type WaitlistEnvSettings = SettingValues<typeof WAITLIST_ENV_SETTINGS>;
