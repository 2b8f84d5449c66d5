/**
 * The card board's policy actions (tack.*). Card-board keys are ordinary platform workspace
 * API keys whose policy allows these (e.g. "tack.card.write", or "tack.*"). The built-in
 * admin role holds tack.*; the member role reads (migration 0060).
 */
export const TACK_ACTIONS = [
  { name: "tack.workspace.read", description: "List and read board workspaces" },
  { name: "tack.workspace.write", description: "Create, update and archive board workspaces" },
  { name: "tack.project.read", description: "List and read projects and their lists" },
  { name: "tack.project.write", description: "Create, update and archive projects; create, update and delete lists" },
  { name: "tack.card.read", description: "List, search and read cards" },
  { name: "tack.card.write", description: "Create, update, move, complete, reopen and archive cards" },
  { name: "tack.label.read", description: "List and read labels" },
  { name: "tack.label.write", description: "Create, update and delete labels" },
  { name: "tack.comment.read", description: "Read card comments" },
  { name: "tack.comment.write", description: "Comment on cards" },
  { name: "tack.activity.read", description: "Read project and card activity" },
] as const;
