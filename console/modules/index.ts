/**
 * Every console module, in navigation order. Adding a service's screens: write
 * console/modules/<service>.tsx exporting a ConsoleModule and add it here (one line).
 */
import type { ConsoleModule } from "../lib/module";
import { accountModule } from "./account";
import { authModule } from "./auth";
import { instanceModule } from "./instance";
import { mailModule } from "./mail";
import { mailboxesModule } from "./mailboxes";
import { socialModule } from "./social";
import { tackModule } from "./tack";
import { trawlModule } from "./trawl";
import { waitlistModule } from "./waitlist";
import { webhooksModule } from "./webhooks";
import { workspaceModule } from "./workspace";

export const MODULES: readonly ConsoleModule[] = [instanceModule, accountModule, workspaceModule, authModule, mailModule, mailboxesModule, waitlistModule, tackModule, trawlModule, socialModule, webhooksModule];
