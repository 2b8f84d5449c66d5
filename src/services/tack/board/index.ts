/**
 * What the rest of the card board (the module and the webhook records at the service's root)
 * uses of the board's tables: a board workspace looked up by the webhook scope, and the rows
 * a deleted platform workspace takes along (its board workspaces' webhook endpoints, the
 * search index), run in the caller's transaction.
 */
export { dropSearchRows } from "./cards-store";
export { workspaceById, workspaceByRef, workspaceIdsOfOwner } from "./store";
