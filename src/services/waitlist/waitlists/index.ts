/**
 * What the other waitlist features use of waitlists: the service (by type; its scoped() checks
 * the caller and finds the waitlist), the topic the public pages' cache listens on, the port the
 * notification worker fills (Notifier), and the rows and store operations they read or write in
 * their own transaction (the public lookup by slugs, the workspace settings, a new variant).
 */
export { PUBLIC_TOPIC, type Notifier, type WaitlistService } from "./service";
export { domainUsed, insertVariant, renameWorkspace, settingsOf, waitlistById, waitlistBySlugs, type SettingsRow, type VariantRow, type WaitlistRow } from "./store";
export type { WaitlistView } from "./views";
