/**
 * What a service contributes to the console: one module file (console/modules/<name>.tsx)
 * exporting a ConsoleModule, listed once in console/modules/index.ts. The shell builds the
 * navigation, the routes (#/w/<workspace>/<module>/<screen>/... or #/<module>/<screen>/...)
 * and the service gate from it.
 */
import type { FunctionComponent } from "preact";
import type { Get } from "./api";

/** The caller as the API describes it: the account and its workspaces. */
export type Me = Get<"/platform/v1/introspect">;
export type Workspace = Me["workspaces"][number];

export interface ScreenProps {
  me: Me;
  /** The selected workspace (workspace-scoped modules only). */
  ws: Workspace;
  /** Path segments after the screen's own (e.g. an id). */
  rest: string[];
  /** Link to another screen of the same module: href(screenId, ...rest). */
  href: (screen: string, ...rest: string[]) => string;
  /** Re-reads the caller (after a workspace or service change). */
  refreshMe: () => Promise<void>;
}

export interface Screen {
  id: string;
  title: string;
  view: FunctionComponent<ScreenProps>;
}

export interface ConsoleModule {
  id: string;
  title: string;
  /** Instance modules need no workspace; workspace modules get one in their props. */
  scope: "instance" | "workspace";
  /** The Bunker service that must be enabled in the workspace for the module to show. */
  service?: string;
  screens: Screen[];
}
