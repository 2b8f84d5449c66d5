/**
 * Mail's ports (ServiceModule.provides, ModuleContext.ports): what other services use of mail
 * (mail.sending: domains, templates and templated sends), and the check mail asks every
 * provider before it deletes a domain (mail.domain-in-use: its mailboxes part, and any service
 * whose settings name a domain).
 */
import type { Sql } from "../../core/db";
import { ApiError } from "../../core/errors";
import { sendRenderer } from "./content/part";
import type { DomainService } from "./domains/part";
import type { MailParts } from "./part";
import type { SendService } from "./sending/part";

/** A reason when the domain is in use (DELETE answers 409 DOMAIN_IN_USE with it), else null. Runs in the delete's transaction `t`. */
export type DomainInUseCheck = (t: Sql, domain: { id: string; workspace_id: string; fqdn: string }) => Promise<string | null>;

/** What another service may use of mail: its domains and templates, and templated sends. */
export interface MailSending {
  /** A mail domain of the workspace (null when absent or another workspace's). */
  domain(db: Sql, workspaceId: string, id: string): Promise<{ id: string; fqdn: string; status: string; intent: string } | null>;
  /** True when the workspace has a sendable template of that name. */
  templateExists(db: Sql, workspaceId: string, name: string): Promise<boolean>;
  /** Queues one templated mail without a caller principal (the checks of POST /templates/{name}/send apply). */
  send(workspaceId: string, template: string, body: { from: string; to: string; data: Record<string, unknown> }): Promise<{ message_id: string }>;
}

declare module "../../kernel/module" {
  interface Ports {
    "mail.sending": MailSending;
    "mail.domain-in-use": DomainInUseCheck;
  }
}

/** The mail.sending port over the mail parts. */
export function mailSending(parts: MailParts): MailSending {
  const domains = parts.domains as DomainService;
  const sending = parts.sending as SendService;
  return {
    async domain(db, workspaceId, id) {
      return (await domains.domainById(db, workspaceId, id)) ?? null;
    },
    async templateExists(db, workspaceId, name) {
      try {
        await sendRenderer(db, workspaceId, name);
        return true;
      } catch (e) {
        if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return false;
        throw e;
      }
    },
    send: (workspaceId, template, body) => sending.sendForService(workspaceId, template, body),
  };
}
