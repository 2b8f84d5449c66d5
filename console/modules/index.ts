/**
 * Every console module, in navigation order. Adding a service's screens: write
 * console/modules/<service>.tsx exporting a ConsoleModule and add it here (one line).
 */
import type { ConsoleModule } from "../lib/module";
import { instanceModule } from "./instance";
import { workspaceModule } from "./workspace";

export const MODULES: readonly ConsoleModule[] = [instanceModule, workspaceModule];
