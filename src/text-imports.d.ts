declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const text: string;
  export default text;
}
/** Data files imported `with { type: "file" }`: the import is the file's path (embedded by `bun build --compile`). */
declare module "*.gz" {
  const path: string;
  export default path;
}
