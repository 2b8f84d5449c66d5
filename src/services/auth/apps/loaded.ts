import type { AppSettings } from "./settings";

/** An App as every other module sees it: row, parsed settings and its issuer. */
export interface LoadedApp {
  id: string;
  workspaceId: string;
  slug: string;
  displayName: string;
  settings: AppSettings;
  issuer: string;
  publishableKey: string;
  createdAt: string;
  updatedAt: string;
}
