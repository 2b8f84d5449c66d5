/**
 * The mail service's sending part (see ../part.ts): the send routes (send, send-batch,
 * test-send), the send settings (rate limit) and the delivery worker (job mail.messages.deliver,
 * every 2 seconds, also run right after a send commits). Uses parts.domains (DKIM keys, MX
 * resolver), parts.content (rendering) and parts.messages (the queue and its outcomes).
 */
import { defineMailPart } from "../part";
import { sendingRoutes } from "./routes";
import { DELIVER_JOB, SendService } from "./service";

export { DELIVER_JOB, SendService };

export const sendingPart = defineMailPart({
  name: "sending",
  create: (deps, parts) => new SendService(deps, parts),
  routes: (svc, deps) => sendingRoutes(svc, deps),
  jobs: (svc) => [{ name: DELIVER_JOB, schedule: "*/2 * * * * *", run: async () => void (await svc.deliverDue()) }],
});
