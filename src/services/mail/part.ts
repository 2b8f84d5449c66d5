/**
 * The mail service is built from parts, each in its own folder with its own tables, store,
 * routes and jobs: domains/ (sending domains, DKIM, DNS checks), content/ (brand and
 * templates), messages/ (the outbound message log, suppressions, deliverability, and the
 * sending pipeline). module.ts creates them in order; a part may use the parts before it.
 */
import type { Sql } from "../../core/db";
import type { JobDefinition } from "../../core/scheduler";
import type { Routes, ServiceDeps } from "../../kernel/module";

/** The services of the parts created so far, by part name. */
export type MailParts = Record<string, unknown>;

export interface MailPart<S = unknown> {
  name: string;
  create(deps: ServiceDeps, parts: MailParts): S;
  /** Routes under /mail/v1/workspaces/:workspace_id/... (full paths). */
  routes?(service: S, deps: ServiceDeps): Routes;
  jobs?(service: S, deps: ServiceDeps): JobDefinition[];
  /** Inside the transaction that deletes a workspace (rows go by foreign key; objects here). */
  onWorkspaceDelete?(service: S, t: Sql, workspaceId: string): Promise<void>;
  /** Awaited on shutdown, before the database closes. */
  stop?(service: S): Promise<void>;
}

export const defineMailPart = <S>(part: MailPart<S>): MailPart<S> => part;
