/**
 * What the other mail parts use of messages: the part's service (queue, claims, outcomes,
 * suppressions), the message row the delivery worker and the sandbox read, and the cursor
 * error the parts' lists share.
 */
export { badCursor } from "./query";
export type { MessageService, QueueInput } from "./service";
export type { MessageRow } from "./store";
