/** TypeBox models of the community service, shared by its routes and the OpenAPI document. */
import type { TInteger } from "@sinclair/typebox";
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../../access/schemas";
import { DESCRIPTION_MAX, DISPLAY_NAME_MAX, LIST_DEFAULT, LIST_MAX, Q_MAX } from "./limits";
import { SETTINGS, type SettingKey } from "./settings";
import { Uuid, UuidOut } from "../core/schemas";

export { ErrorBody, Pagination };

const Status = t.Union([t.Literal("active"), t.Literal("suspended"), t.Literal("archived")], { description: "active | suspended | archived (archived is final)" });

/** Built from the declarations; typed by their keys (Object.fromEntries forgets them), so Static<> of a community names each setting. */
export const Settings = t.Object(
  Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, t.Integer({ minimum: s.min, maximum: s.max, default: s.default, description: s.description })])) as Record<SettingKey, TInteger>,
  { description: "Every setting, defaults filled in" },
);

/** Settings in a request: any subset of the known keys; null resets a key to its default; unknown keys are 400. */
const SettingsInput = JsonObject({
  description: `Known keys: ${Object.entries(SETTINGS).map(([k, s]) => `${k} (integer ${s.min}-${s.max}, default ${s.default})`).join(", ")}. Unknown keys are 400; null resets a key.`,
});

export const Community = t.Object({
  id: UuidOut(),
  workspace_id: UuidOut(),
  slug: t.String(),
  display_name: t.String(),
  description: t.Nullable(t.String()),
  app_id: t.Nullable(UuidOut("Connected Auth App")),
  settings: Settings,
  status: Status,
  created_at: t.String(),
  updated_at: t.String(),
});

export const CommunityList = t.Object({ data: t.Array(Community), pagination: Pagination });

export const CommunityCreate = t.Object({
  slug: t.String({ maxLength: 63, description: "3-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit; unique in the workspace" }),
  display_name: t.String({ description: `1-${DISPLAY_NAME_MAX} characters after trimming` }),
  description: t.Optional(t.Nullable(t.String({ maxLength: DESCRIPTION_MAX }))),
  app_id: t.Optional(t.Nullable(Uuid("Id of an Auth App of this workspace to connect (one community per App)"))),
  settings: t.Optional(SettingsInput),
});

export const CommunityPatch = t.Object({
  display_name: t.Optional(t.String({ description: `1-${DISPLAY_NAME_MAX} characters after trimming` })),
  description: t.Optional(t.Nullable(t.String({ maxLength: DESCRIPTION_MAX }))),
  settings: t.Optional(SettingsInput),
  status: t.Optional(t.String({ description: "active | suspended | archived; archived is final (409 COMMUNITY_ARCHIVED)" })),
});

export const CommunityListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: `1-${LIST_MAX}, default ${LIST_DEFAULT}` })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page; it keeps that page's q and status" })),
  q: t.Optional(t.String({ description: `Case-insensitive substring of the display name or slug (% and _ literal); at most ${Q_MAX} characters` })),
  status: t.Optional(t.UnionEnum(["active", "suspended", "archived"])),
});
