/**
 * The mail service's mailboxes part (see ../part.ts): mailboxes on receiving domains and the
 * received messages in them (routes, service, store). Uses parts.domains; its domainInUse
 * is mail's mail.domain-in-use check (a domain with mailboxes cannot be deleted).
 */
import { defineMailPart } from "../part";
import { mailboxRoutes } from "./routes";
import { MailboxService } from "./service";

export { MailboxService };

export const mailboxesPart = defineMailPart({
  name: "mailboxes",
  create: (deps, parts) => new MailboxService(deps, parts),
  routes: (svc, deps) => mailboxRoutes(svc, deps),
});
