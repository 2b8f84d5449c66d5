// mailparser ships no type definitions; the tests only use simpleParser's common fields.
declare module "mailparser" {
  export function simpleParser(source: unknown, options?: unknown): Promise<any>;
}
