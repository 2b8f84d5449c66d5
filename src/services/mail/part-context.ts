/**
 * What the feature modules of a mail part share: the service deps, the workspace check every
 * mail route makes, and the mail event emitter. A part's service builds one and hands it to
 * each of its modules (messages/, domains/), so the access check and the event scope are
 * written once.
 */
import type { Principal } from "../../access/principal";
import type { Sql } from "../../core/db";
import type { ServiceDeps } from "../../kernel/module";
import { emitEvent } from "../../kernel/webhooks";
import { MAIL_WEBHOOKS, type MailEvents } from "./events";

export class MailPartContext {
  constructor(readonly d: ServiceDeps) {}

  get ctx() {
    return this.d.ctx;
  }

  /** The workspace, once `p` may do `action` in it and mail is switched on for it; its id a UUID of any case (the route schema's check). */
  workspace(p: Principal, workspaceId: string, action: string) {
    return this.d.guard(p, workspaceId.toLowerCase(), action);
  }

  /** Records a mail event on `t`, the transaction of the change it describes. */
  emit<K extends keyof MailEvents>(t: Sql, workspaceId: string, type: K, data: MailEvents[K]) {
    return emitEvent(this.d.webhooks.engine, MAIL_WEBHOOKS, t, workspaceId, type, data);
  }
}
