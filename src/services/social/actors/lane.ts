/**
 * What every feature of the customer-backend lane starts with: the community of the route
 * (with its action) and the actors of that community (another community's actor is 404).
 * It sits with actors because it reads them; the features above it get it from module.ts.
 */
import type { Principal } from "../../../access/principal";
import type { Sql } from "../../../core/db";
import { notFound } from "../../../core/errors";
import type { AppContext } from "../../../context";
import type { Action } from "../core/common";
import { checkUuid } from "../core/schemas";
import type { CommunityRow, CommunityService } from "../communities/service";
import { actorById, actorsByIds, type ActorRow } from "./store";

export type { ActorRow };

/** What every part of the lane needs: the app context and the community lookup. */
export class Lane {
  constructor(
    readonly ctx: AppContext,
    readonly communities: CommunityService,
  ) {}

  /** The community of the route, for a caller holding `action` in its workspace; 404 across workspaces, 403 when social is off. */
  community(p: Principal, communityId: string, action: Action): Promise<CommunityRow> {
    return this.communities.forPrincipal(p, communityId, action);
  }

  /** An actor of the community, on `db`: 400 naming `field` when malformed; unknown or another community's: 404. */
  async actor(db: Sql, communityId: string, id: unknown, field = "actor_id"): Promise<ActorRow> {
    const a = await actorById(db, checkUuid(id, field));
    if (!a || a.community_id !== communityId) throw notFound("Actor");
    return a;
  }
}

/** Two actors of the community in one query (each 404 like actor()). */
export async function actorPair(db: Sql, communityId: string, a: string, b: string): Promise<[ActorRow, ActorRow]> {
  const rows = await actorsByIds(db, communityId, a === b ? [a] : [a, b]);
  const x = rows.find((r) => r.id === a);
  const y = rows.find((r) => r.id === b);
  if (!x || !y) throw notFound("Actor");
  return [x, y];
}
