/**
 * Route templates of the card board below /tack/api/v1/workspaces (BOARD_PREFIX). {workspace}
 * is :workspace_id in the router (one parameter name per path position under /workspaces/,
 * shared with the webhook routes).
 */
export const BOARD_PREFIX = "/tack/api/v1/workspaces";
export const WS = "/:workspace_id";
export const PROJECT = `${WS}/projects/:project`;
export const LIST = `${PROJECT}/lists/:list`;
export const LABEL = `${WS}/labels/:label`;
export const CARD = `${PROJECT}/cards/:card_id`;
