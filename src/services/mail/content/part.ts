/** The mail service's content part (see ../part.ts). Not built yet: no routes, no tables. */
import { defineMailPart } from "../part";

export const contentPart = defineMailPart({ name: "content", create: () => null });
