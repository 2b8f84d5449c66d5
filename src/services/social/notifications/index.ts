/** What the other features of the community use of notifications: the activity row a write adds in its own transaction. */
export { addActivity, type Activity } from "./store";
