// mailparser ships no type definitions; the inbound part uses simpleParser's common fields.
declare module "mailparser" {
  export function simpleParser(source: unknown, options?: unknown): Promise<any>;
}
