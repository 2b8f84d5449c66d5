/**
 * Policy evaluation. A policy is an array of statements
 *   {effect: "allow", actions: string[], resources: string[]}
 * and there is no "deny": a request is allowed when ANY statement allows it, i.e. when one
 * statement has an action pattern covering the action AND a resource pattern covering the
 * resource. An empty policy allows nothing. Statements whose effect is not exactly "allow"
 * are ignored (they grant nothing), so malformed stored data fails closed.
 *
 * Action patterns
 *   "*"              every action
 *   "<p>.*"          every action under the dotted prefix <p>, at any depth:
 *                    "auth.*" covers "auth.tenant.read"; "auth.tenant.*" covers
 *                    "auth.tenant.members.add". The dot is part of the prefix, so
 *                    "member.*" does NOT cover "members.list".
 *   anything else    exact name. A "*" elsewhere (e.g. "member*", "*.list") is not a
 *                    wildcard; validatePolicy rejects such patterns.
 *
 * Resource patterns
 *   "*"              every resource, including the collection-level resource "*".
 *   "<prefix>*"      plain string prefix (AWS-ARN style): "workspace/abc/*" covers
 *                    "workspace/abc/apikey/1" but neither "workspace/abc" itself nor
 *                    "workspace/abd". "workspace/1*" covers "workspace/1", "workspace/12"
 *                    and "workspace/1/x" (it is a character prefix, not a segment prefix;
 *                    write "workspace/1/*" to mean "under workspace 1").
 *   anything else    exact string.
 *   A "*" is only meaningful as the last character; validatePolicy rejects it elsewhere.
 *
 * The resource checked by isAllowed defaults to "*", meaning "the collection / not one
 * specific resource" (e.g. workspace.create, member.list without a scope). Only a statement
 * whose resources contain "*" itself covers it: a statement scoped to "workspace/abc/*"
 * does NOT allow a collection-level check. Routes that act on one resource must pass it.
 *
 * Both matchers double as "covers" relations when the right-hand side is itself a pattern:
 * actionMatches("auth.*", "auth.tenant.*") and resourceMatches("workspace/*",
 * "workspace/abc/*") are true, actionMatches("member.list", "member.*") is false. policyCovers
 * relies on this.
 *
 * Everything here is pure and allocation-free per call (no slicing, no regexes on the hot path).
 * For a policy evaluated many times (cached principal), compilePolicy() builds Set-based lookups.
 */
import { ApiError, type ErrorDetail } from "../core/errors";

export interface Statement {
  effect: "allow";
  actions: string[];
  resources: string[];
}
export type Policy = Statement[];

/**
 * What policy checks need of the action catalogue (actions.ts: ActionRegistry). Declared
 * here so policy.ts does not import the registry, which imports the name rules from here.
 */
export interface KnownActions {
  has(name: string): boolean;
  list(): { name: string }[];
  matching(pattern: string): string[];
}

/** A concrete action name: two or more lowercase dot-separated segments. */
export const ACTION_NAME_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
/** A prefix action pattern "<one or more segments>.*". */
const ACTION_PREFIX_PATTERN_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.\*$/;
export const MAX_ACTION_LENGTH = 128;
export const MAX_STATEMENTS = 50;
export const MAX_ENTRIES = 100;
export const MAX_RESOURCE_LENGTH = 256;

const STAR = 42; // "*"
const DOT = 46; // "."

/** True when s starts with the first n characters of p (no allocation). */
function startsWithFirst(s: string, p: string, n: number): boolean {
  if (s.length < n) return false;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) !== p.charCodeAt(i)) return false;
  return true;
}

/** Does action pattern `pattern` cover `action` (a concrete name, or itself a pattern)? */
export function actionMatches(pattern: string, action: string): boolean {
  const n = pattern.length;
  if (n === 1 && pattern.charCodeAt(0) === STAR) return true;
  if (n >= 3 && pattern.charCodeAt(n - 1) === STAR && pattern.charCodeAt(n - 2) === DOT) {
    // "<p>.*": action must start with "<p>." and have something after it.
    return action.length > n - 1 && startsWithFirst(action, pattern, n - 1);
  }
  return pattern === action;
}

/** Does resource pattern `pattern` cover `resource` (a concrete resource, "*", or a pattern)? */
export function resourceMatches(pattern: string, resource: string): boolean {
  const n = pattern.length;
  if (n > 0 && pattern.charCodeAt(n - 1) === STAR) return startsWithFirst(resource, pattern, n - 1);
  return pattern === resource;
}

function anyAction(patterns: string[], action: string): boolean {
  for (let i = 0; i < patterns.length; i++) if (actionMatches(patterns[i]!, action)) return true;
  return false;
}

function anyResource(patterns: string[], resource: string): boolean {
  for (let i = 0; i < patterns.length; i++) if (resourceMatches(patterns[i]!, resource)) return true;
  return false;
}

/**
 * Does the policy allow `action` on `resource`? resource defaults to "*" (collection level:
 * only statements listing the resource "*" cover it).
 */
export function isAllowed(policy: Policy, action: string, resource = "*"): boolean {
  for (let i = 0; i < policy.length; i++) {
    const st = policy[i]!;
    if (st.effect !== "allow") continue;
    if (anyAction(st.actions, action) && anyResource(st.resources, resource)) return true;
  }
  return false;
}

/**
 * Allowed only when EVERY policy allows (intersection), e.g. an API key:
 * [keyPolicy, minterCurrentRolePolicy]. An empty list allows nothing (fails closed).
 */
export function isAllowedByAll(policies: Policy[], action: string, resource = "*"): boolean {
  if (policies.length === 0) return false;
  for (let i = 0; i < policies.length; i++) if (!isAllowed(policies[i]!, action, resource)) return false;
  return true;
}

/**
 * True when everything `inner` could allow is also allowed by `outer` (API-key mint check:
 * a key's policy may not exceed its minter's).
 *
 * Conservative: each (action pattern, resource pattern) pair of every inner statement must be
 * covered by ONE outer statement (an outer action pattern covering it as a pattern, and an
 * outer resource pattern covering it as a pattern). It never says "covers" wrongly, but it may
 * say "does not cover" when only a union of outer statements would cover a pattern, e.g.
 * outer [member.list, member.create] vs inner [member.*] is false even if those are the only
 * member actions today (a future member action would otherwise leak into the key).
 * Inner statements that grant nothing (effect not "allow", empty lists) are trivially covered.
 */
export function policyCovers(outer: Policy, inner: Policy): boolean {
  for (const st of inner) {
    if (st.effect !== "allow") continue;
    for (const a of st.actions) {
      for (const r of st.resources) {
        let covered = false;
        for (const o of outer) {
          if (o.effect === "allow" && anyAction(o.actions, a) && anyResource(o.resources, r)) {
            covered = true;
            break;
          }
        }
        if (!covered) return false;
      }
    }
  }
  return true;
}

/**
 * The concrete registered actions the policy allows on the collection resource "*",
 * sorted by name (introspection output).
 */
export function effectiveActions(policy: Policy, registry: KnownActions): string[] {
  const out: string[] = [];
  for (const { name } of registry.list()) if (isAllowed(policy, name, "*")) out.push(name);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Precompiled form for hot paths that evaluate one policy many times.

interface CompiledStatement {
  allActions: boolean;
  exactActions: Set<string>;
  actionPatterns: string[]; // "<p>.*" patterns
  allResources: boolean;
  exactResources: Set<string>;
  resourcePatterns: string[]; // "<prefix>*" patterns
}

export interface CompiledPolicy {
  readonly policy: Policy;
  allows(action: string, resource?: string): boolean;
}

/** Same semantics as isAllowed(policy, ...), with Set lookups for exact entries. */
export function compilePolicy(policy: Policy): CompiledPolicy {
  const statements: CompiledStatement[] = [];
  for (const st of policy) {
    if (st.effect !== "allow") continue;
    const c: CompiledStatement = {
      allActions: false,
      exactActions: new Set(),
      actionPatterns: [],
      allResources: false,
      exactResources: new Set(),
      resourcePatterns: [],
    };
    for (const a of st.actions) {
      if (a === "*") c.allActions = true;
      else if (a.length >= 3 && a.endsWith(".*")) c.actionPatterns.push(a);
      else c.exactActions.add(a);
    }
    for (const r of st.resources) {
      if (r === "*") c.allResources = true;
      else if (r.endsWith("*")) c.resourcePatterns.push(r);
      else c.exactResources.add(r);
    }
    statements.push(c);
  }
  return {
    policy,
    allows(action: string, resource = "*"): boolean {
      for (let i = 0; i < statements.length; i++) {
        const c = statements[i]!;
        if (!(c.allActions || c.exactActions.has(action) || anyAction(c.actionPatterns, action))) continue;
        if (c.allResources || c.exactResources.has(resource) || anyResource(c.resourcePatterns, resource)) return true;
      }
      return false;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Validation of client-supplied policies.

const STATEMENT_KEYS = new Set(["effect", "actions", "resources"]);
const MAX_DETAILS = 20;

/** Is `s` a syntactically valid action pattern ("*", "a.b[.c...]", "a[.b...].*")? */
export function isValidActionPattern(s: string): boolean {
  return s.length <= MAX_ACTION_LENGTH && (s === "*" || ACTION_NAME_RE.test(s) || ACTION_PREFIX_PATTERN_RE.test(s));
}

/**
 * Validate untrusted input as a policy and return a normalized copy (only effect, actions,
 * resources). Throws ApiError 400 VALIDATION_ERROR listing every problem (up to 20) with
 * field paths like "policy[0].actions[1]" (`field` sets the root name).
 *
 * Rules: an array of at most 50 statements; each an object with exactly the keys effect,
 * actions, resources (unknown keys are rejected so a misspelled or unsupported restriction is
 * never silently dropped); effect must be "allow"; actions/resources non-empty arrays of at
 * most 100 entries; actions are "*", an exact name or "<prefix>.*"; with a registry an exact
 * action must be registered and a prefix pattern must cover at least one registered action;
 * resources are non-empty strings of at most 256 characters without whitespace and with "*"
 * only as the last character.
 */
export function validatePolicy(input: unknown, registry?: KnownActions, field = "policy"): Policy {
  const details: ErrorDetail[] = [];
  const add = (f: string, reason: string) => {
    if (details.length < MAX_DETAILS) details.push({ field: f, reason });
  };
  const fail = (): never => {
    const first = details[0]!;
    const message =
      details.length === 1 ? `Invalid ${first.field}: ${first.reason}` : `Invalid ${field}: ${details.length} problems`;
    throw new ApiError(400, "VALIDATION_ERROR", message, details);
  };

  if (!Array.isArray(input)) {
    add(field, "must be an array of statements");
    return fail();
  }
  if (input.length > MAX_STATEMENTS) {
    add(field, `at most ${MAX_STATEMENTS} statements`);
    return fail();
  }

  const out: Policy = [];
  input.forEach((raw: unknown, i: number) => {
    const sf = `${field}[${i}]`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      add(sf, "must be an object with effect, actions and resources");
      return;
    }
    const st = raw as Record<string, unknown>;
    for (const k of Object.keys(st)) if (!STATEMENT_KEYS.has(k)) add(`${sf}.${k}`, "unknown field");
    if (st.effect !== "allow") add(`${sf}.effect`, 'must be "allow"');

    const actions = checkList(st.actions, `${sf}.actions`, add);
    if (actions) {
      actions.forEach((a, j) => {
        const af = `${sf}.actions[${j}]`;
        if (typeof a !== "string") return add(af, "must be a string");
        if (!isValidActionPattern(a)) {
          return add(af, 'must be "*", an action name like "member.list" or a prefix pattern like "member.*"');
        }
        if (!registry || a === "*") return;
        if (a.endsWith(".*")) {
          if (registry.matching(a).length === 0) add(af, `matches no known action`);
        } else if (!registry.has(a)) {
          add(af, "unknown action");
        }
      });
    }

    const resources = checkList(st.resources, `${sf}.resources`, add);
    if (resources) {
      resources.forEach((r, j) => {
        const rf = `${sf}.resources[${j}]`;
        if (typeof r !== "string") return add(rf, "must be a string");
        if (r.length === 0) return add(rf, "must not be empty");
        if (r.length > MAX_RESOURCE_LENGTH) return add(rf, `at most ${MAX_RESOURCE_LENGTH} characters`);
        if (/\s/.test(r)) return add(rf, "must not contain whitespace");
        const star = r.indexOf("*");
        if (star !== -1 && star !== r.length - 1) add(rf, '"*" is only allowed as the last character');
      });
    }

    if (actions && resources) {
      out.push({ effect: "allow", actions: actions.slice() as string[], resources: resources.slice() as string[] });
    }
  });

  if (details.length) fail();
  return out;
}

function checkList(v: unknown, f: string, add: (f: string, reason: string) => void): unknown[] | null {
  if (!Array.isArray(v)) {
    add(f, "must be an array of strings");
    return null;
  }
  if (v.length === 0) {
    add(f, "must not be empty");
    return null;
  }
  if (v.length > MAX_ENTRIES) {
    add(f, `at most ${MAX_ENTRIES} entries`);
    return null;
  }
  return v;
}
