/**
 * What the rest of Auth uses of the users' feature besides its services: whether an App has a
 * role of a name (an App's default_role) and the retention purge of expired sessions.
 */
export { roleByName } from "./store/roles";
export { purgeExpiredSessions } from "./store/users";
