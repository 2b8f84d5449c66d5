/** What the other platform features use of console identity: an account's row by id (introspection). */
export { accountById } from "./store/accounts";
