/**
 * The mail service's inbound part (see ../part.ts): the handler the SMTP listener calls
 * (mailboxes, test addresses, bounce and complaint reports at VERP addresses) and the daily
 * retention purge (job mail.inbound.retention, 03:30 UTC). Uses parts.domains,
 * parts.messages and the mailboxes part's tables.
 */
import { defineMailPart } from "../part";
import { inboundRoutes } from "./routes";
import { InboundService, PURGE_JOB } from "./service";

export { InboundService, PURGE_JOB };

export const inboundPart = defineMailPart({
  name: "inbound",
  create: (deps, parts) => new InboundService(deps, parts),
  routes: (svc, deps) => inboundRoutes(svc, deps),
  jobs: (svc) => [{ name: PURGE_JOB, schedule: "0 30 3 * * *", run: async () => void (await svc.purge()) }],
  onWorkspaceDelete: (svc, t, workspaceId) => svc.dropWorkspaceObjects(t, workspaceId),
  stop: (svc) => svc.stop(),
});
