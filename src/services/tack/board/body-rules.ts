/**
 * One 400 names every bad field of a card-board body, also when the route's schema refused it.
 *
 * The schema (types: a number where a string goes, a string where an integer goes) is checked
 * by Elysia before the handler, so the board's own rules (lengths in characters, slugs,
 * colors, dates, priorities: validate.ts Checks, run by the service) never ran for such a
 * body: a wrong type in one field hid a too-long name in another. When the schema refuses
 * the body of a route listed here, its pure rules (the same functions the service runs, no
 * lookups: unknown labels or lists still need a valid body) run on the body as sent, and the
 * answer lists both: the rules' details first, in the board's field names (lists[1].name),
 * then what only the schema found. A field both name keeps the rule's reason, except a
 * missing one, which stays "required".
 */
import type { ErrorDetail } from "../../../core/errors";
import { batchItemInput, batchMoveInput, cardInput, cardPatch, commentInput, moveInput } from "./cards";
import { BOARD_PREFIX, CARD, LABEL, LIST, PROJECT, WS } from "./paths";
import { labelInput, labelPatch, listInput, listPatch, projectInput, projectPatch, workspaceInput, workspacePatch, type Body } from "./service";
import { Checks } from "./validate";

type Rules = (v: Checks, b: Body) => unknown;

const batchMove: Rules = (v, b) => batchMoveInput(v, b).forEach((m, i) => batchItemInput(v, m, i));

/** The body rules of each route, by "METHOD template". */
const RULES = new Map<string, Rules>(
  (
    [
      ["POST", "", workspaceInput],
      ["PATCH", WS, workspacePatch],
      ["POST", `${WS}/projects`, projectInput],
      ["PATCH", PROJECT, projectPatch],
      ["POST", `${PROJECT}/lists`, listInput],
      ["PATCH", LIST, listPatch],
      ["POST", `${WS}/labels`, labelInput],
      ["PATCH", LABEL, labelPatch],
      ["POST", `${PROJECT}/cards`, cardInput],
      ["PATCH", CARD, cardPatch],
      ["POST", `${CARD}/move`, moveInput],
      ["POST", `${PROJECT}/cards/batch-move`, batchMove],
      ["POST", `${CARD}/comments`, commentInput],
    ] as const
  ).map(([method, path, rules]): [string, Rules] => [`${method} ${BOARD_PREFIX}${path}`, rules]),
);

/** A schema path as the kernel writes it (lists.1.name) in the board's form (lists[1].name). */
const boardField = (field: string) => field.replace(/\.(\d+)(?=\.|$)/g, "[$1]");

const isBody = (v: unknown): v is Body => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The error body of a schema-refused request body with the route's rule details merged in,
 * or undefined when the route has no rules or the value is not an object body.
 */
export function withBodyRules(method: string, route: string | undefined, body: unknown, schemaDetails: ErrorDetail[]) {
  const rules = route === undefined ? undefined : RULES.get(`${method} ${route}`);
  if (!rules || !isBody(body)) return undefined;
  const v = new Checks();
  rules(v, body);
  const fromSchema = new Map(schemaDetails.map((d) => [boardField(d.field), d]));
  for (const d of v.details) {
    const s = fromSchema.get(d.field);
    if (s?.reason === "required") d.reason = s.reason;
  }
  const named = new Set(v.details.map((d) => d.field));
  for (const [field, d] of fromSchema) if (!named.has(field)) v.fail(field, d.reason);
  return v.error()?.toBody();
}
