/** The mail service's content part (see ../part.ts): brand and templates. */
import { defineMailPart } from "../part";
import { contentRoutes } from "./routes";
import { ContentService } from "./service";

export { renderForSend, sendRenderer } from "./service";
export type { ContentService, SendRenderer } from "./service";

export const contentPart = defineMailPart({
  name: "content",
  create: (deps) => new ContentService(deps),
  routes: (service, deps) => contentRoutes(service, deps),
});
