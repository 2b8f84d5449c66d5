/** The mail service's messages part (see ../part.ts). Not built yet: no routes, no tables. */
import { defineMailPart } from "../part";

export const messagesPart = defineMailPart({ name: "messages", create: () => null });
