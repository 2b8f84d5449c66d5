/**
 * The mail service's MessageService on a test app (the same class the module creates, on
 * the mail module's context), to queue messages and drive the send
 * pipeline's state machine in tests without the send routes.
 */
import { MessageService, type QueueInput } from "../../src/services/mail/messages/service";
import type { TestApp } from "./app";

export function messageService(app: TestApp): MessageService {
  return new MessageService(app.contextOf("mail"));
}

let n = 0;
/** One queued message per call (defaults filled in); returns its row. */
export async function queueOne(svc: MessageService, workspaceId: string, over: Partial<QueueInput> = {}) {
  n++;
  const [row] = await svc.queue(workspaceId, [
    { domainId: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f", from: "hello@mail.acme.example", to: `user${n}@example.com`, subject: `Subject ${n}`, templateName: "welcome", html: `<p>Hi ${n}</p>`, text: `Hi ${n}`, ...over },
  ]);
  return row!;
}

/** Events of the mail scope of a workspace, oldest first: [{type, data}]. */
export async function mailEvents(app: TestApp, workspaceId: string) {
  const rows = await app.ctx.db.all<{ type: string; data: string }>("SELECT type, data FROM core_events WHERE scope LIKE ? ORDER BY created_at, id", `%mail:${workspaceId}`);
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}
