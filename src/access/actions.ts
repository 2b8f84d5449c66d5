/**
 * Action registry: the catalogue of permission actions ("member.list", "auth.tenant.read", ...).
 *
 * Each service adds its actions at wiring time (app.ts builds one ActionRegistry and passes
 * it to every service), so there is no module-level state: tests build isolated registries.
 *
 * - `service` is the action namespace (the first segment of every name it registers).
 *   A component that owns several namespaces (platform: workspace, member, apikey) calls
 *   `register` once per namespace. Calling `register` again for the same namespace adds.
 * - A name must start with `<service>.` and match ACTION_NAME_RE; duplicates throw.
 */
import { ACTION_NAME_RE, MAX_ACTION_LENGTH, actionMatches } from "./policy";

export { ACTION_NAME_RE, MAX_ACTION_LENGTH };
/** A service / namespace name: one segment. */
export const SERVICE_NAME_RE = /^[a-z][a-z0-9_]*$/;

export interface ActionInfo {
  service: string;
  name: string;
  description: string;
}

export class ActionRegistry {
  private readonly actions = new Map<string, ActionInfo>();

  register(service: string, actions: { name: string; description: string }[]): void {
    if (typeof service !== "string" || !SERVICE_NAME_RE.test(service)) {
      throw new Error(`ActionRegistry: invalid service name ${JSON.stringify(service)}`);
    }
    const prefix = service + ".";
    // Validate the whole batch first so a bad entry registers nothing.
    const seen = new Set<string>();
    for (const a of actions) {
      const name = a?.name;
      if (typeof name !== "string" || name.length > MAX_ACTION_LENGTH || !ACTION_NAME_RE.test(name)) {
        throw new Error(`ActionRegistry: invalid action name ${JSON.stringify(name)}`);
      }
      if (!name.startsWith(prefix)) {
        throw new Error(`ActionRegistry: action ${name} does not start with its service prefix "${prefix}"`);
      }
      if (typeof a.description !== "string") {
        throw new Error(`ActionRegistry: action ${name} needs a description`);
      }
      if (this.actions.has(name) || seen.has(name)) {
        throw new Error(`ActionRegistry: duplicate action ${name}`);
      }
      seen.add(name);
    }
    for (const a of actions) this.actions.set(a.name, { service, name: a.name, description: a.description });
  }

  has(name: string): boolean {
    return this.actions.has(name);
  }

  /** Every registered action, sorted by name. */
  list(): ActionInfo[] {
    return [...this.actions.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((a) => ({ ...a }));
  }

  /** Registered action names that `pattern` ("*", "x.*", "x.y.*" or an exact name) covers, sorted. */
  matching(pattern: string): string[] {
    const out: string[] = [];
    for (const name of this.actions.keys()) if (actionMatches(pattern, name)) out.push(name);
    return out.sort();
  }
}
