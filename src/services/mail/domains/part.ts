/** The mail service's domains part (see ../part.ts). Not built yet: no routes, no tables. */
import { defineMailPart } from "../part";

export const domainsPart = defineMailPart({ name: "domains", create: () => null });
