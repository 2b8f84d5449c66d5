/** What the rest of Auth uses of M2M clients besides M2mService: a client by its client_id (the token check of AppAccess). */
export { clientByClientId } from "./store";
