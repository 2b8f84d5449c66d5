/**
 * What the feature modules of a mail part share: the service deps, the workspace check every
 * mail route makes, and the mail event emitter. A part's service builds one and hands it to
 * each of its modules (messages/, domains/), so the access check and the event scope are
 * written once.
 */
import type { Principal } from "../../access/principal";
import type { MailContext } from "./events";

export class MailPartContext {
  constructor(readonly d: MailContext) {}

  get ctx() {
    return this.d.ctx;
  }

  /** The workspace, once `p` may do `action` in it and mail is switched on for it; its id a UUID of any case (the route schema's check). */
  workspace(p: Principal, workspaceId: string, action: string) {
    return this.d.guard(p, workspaceId.toLowerCase(), action);
  }

  /** Records a mail event on `t`, the transaction of the change it describes. */
  get emit() {
    return this.d.emit;
  }
}
