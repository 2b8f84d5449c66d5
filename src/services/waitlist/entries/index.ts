/**
 * What the other waitlist features use of entries: the service (by type, for the public
 * sign-up), the entry's views, and the rows and store operations the sign-up runs in its own
 * transaction (the counts, the lookups by email and referral code, the insert).
 */
export type { EntryService } from "./service";
export { NO_INVITE, type ClientInfo, type PublicEntryView } from "./views";
export { countEntries, entryByCode, entryByEmail, insertEntry, recentFromClient, type EntryRow, type EntryStatus } from "./store";
