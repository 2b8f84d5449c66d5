/**
 * The mail service's sandbox part (see ../part.ts and service.ts): the workspace's sandbox
 * sending domain and the dev outbox, for trying mail without a DNS server. Uses
 * parts.domains, parts.messages and parts.inbound; the sending part's delivery worker hands
 * it the sandbox domain's messages.
 */
import type { DomainService } from "../domains/service";
import type { InboundService } from "../inbound/service";
import type { MessageService } from "../messages";
import { defineMailPart } from "../part";
import { sandboxRoutes } from "./routes";
import { SandboxService } from "./service";

export { SandboxService };

export const sandboxPart = defineMailPart({
  name: "sandbox",
  create: (deps, parts) => new SandboxService(deps, parts.domains as DomainService, parts.messages as MessageService, parts.inbound as InboundService),
  routes: (svc, deps) => sandboxRoutes(svc, deps),
});
