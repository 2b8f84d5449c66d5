/**
 * A library loaded on first use instead of at start-up.
 *
 * Mail parsing and authentication, HTML tooling, templates and the disposable-domain list
 * cost most of start-up's CPU when imported at the top (about half of the binary's start),
 * while many processes never use them (a CLI command, a node that only serves the API, each
 * test server). `lazy(() => require("x") as typeof import("x"))` keeps the call synchronous:
 * the bundler of `bun build --compile` still embeds a literal require and wraps the module so
 * that it is evaluated when first required, not when the binary starts.
 */
export function lazy<T>(load: () => T): () => T {
  let loaded: { value: T } | undefined;
  return () => (loaded ??= { value: load() }).value;
}

/** A CommonJS module's export, whether a bundle hands it over as the module or as its `default`. */
export function defaultOf<T>(m: T | { default: T }): T {
  return ((m as { default?: T }).default ?? m) as T;
}
