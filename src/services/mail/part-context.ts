/**
 * The mail module's context as its parts take it: the kernel's ModuleContext, its emit typed
 * by mail's event declarations. Parts import the type from here rather than from events.ts,
 * which reads messages/' schemas: importing it directly would tie every part to messages/
 * in a cycle (test/arch/interior.test.ts).
 */
export type { MailContext } from "./events";
