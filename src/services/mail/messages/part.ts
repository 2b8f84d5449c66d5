/**
 * The mail service's messages part (see ../part.ts): the outbound message log and send
 * queue, delivery outcomes, message settings, suppressions, export, timeline and
 * deliverability (MessageService in service.ts; one module per feature, listed there).
 */
import { defineMailPart } from "../part";
import { messageRoutes } from "./routes";
import { MessageService } from "./service";

export const messagesPart = defineMailPart({
  name: "messages",
  create: (deps) => new MessageService(deps),
  routes: (svc, deps) => messageRoutes(svc, deps),
  // The workspace's message rows go with it (foreign key); their bodies in the object store
  // are deleted once that deletion has committed (not before: a rollback keeps them).
  onWorkspaceDelete: (svc, t, workspaceId) => svc.dropWorkspaceBodies(t, workspaceId),
});
