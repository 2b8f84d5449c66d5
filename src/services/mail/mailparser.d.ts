// mailparser ships no type definitions; parse.ts uses simpleParser's common fields.
declare module "mailparser" {
  export function simpleParser(source: unknown, options?: unknown): Promise<any>;
}
