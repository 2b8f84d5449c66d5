/**
 * What every platform route group is handed: the app's context and the kernel's authz (for
 * principalPlugin). Each group adds the feature services it calls; the Platform facade has
 * them all, so routes.ts passes it whole while no feature imports the facade (which
 * imports every feature).
 */
import type { AppContext } from "../../context";
import type { Authz } from "../../kernel/tenancy";

export interface RouteDeps {
  readonly ctx: AppContext;
  readonly authz: Authz;
}
