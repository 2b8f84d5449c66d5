declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const text: string;
  export default text;
}
/** Swagger UI's files, imported `with { type: "file" }`: the path to read them from (embedded when compiled). */
declare module "swagger-ui-dist/*" {
  const path: string;
  export default path;
}
/** Data files imported `with { type: "file" }`: the import is the file's path (embedded by `bun build --compile`). */
declare module "*.gz" {
  const path: string;
  export default path;
}
/** The admin console's built assets (static/admin/), imported `with { type: "text" }`. */
declare module "*/admin/app.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
/** The guides (README.md, docs/*.md), imported `with { type: "text" }` by core/guides.ts. */
declare module "*.md" {
  const text: string;
  export default text;
}
