/**
 * The mail service's domains part (see ../part.ts): sending/receiving domains, DKIM keys and
 * DNS checks. Later parts use `parts.domains` (a DomainService): activeSendDomain(db,
 * workspaceId, fqdn), domainById(db, workspaceId, id) and the resolver (resolveMx /
 * resolveTxt, DNS_SERVERS-aware). Who uses a domain refuses its delete through the
 * mail.domain-in-use port (../ports.ts).
 */
import { defineMailPart } from "../part";
import { domainRoutes } from "./routes";
import { DomainService } from "./service";

export { DomainService };
export type { DomainView, SendDomain } from "./service";

export const DNS_CHECK_JOB = "mail.domains.dns-check";

export const domainsPart = defineMailPart({
  name: "domains",
  create: (deps) => new DomainService(deps),
  routes: (domains, deps) => domainRoutes(domains, deps),
  // Every minute: the claim picks pending domains last checked 10+ minutes ago and active ones 24+ h ago.
  jobs: (domains) => [{ name: DNS_CHECK_JOB, schedule: "0 * * * * *", run: async () => void (await domains.runDueChecks()) }],
});
