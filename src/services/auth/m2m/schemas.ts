/** The M2M client record the routes serve: its TypeBox model is the type too (views.ts). */
import { t } from "../../../core/schema";

export const Client = t.Object({
  id: t.String({ format: "uuid" }),
  client_id: t.String({ description: "m2m_...: sent to the token endpoint" }),
  name: t.String(),
  permissions: t.Array(t.String()),
  secret_hint: t.String({ description: "Last 4 characters of the current secret" }),
  created_at: t.String({ format: "date-time" }),
  rotated_at: t.Nullable(t.String({ format: "date-time" })),
  last_used_at: t.Nullable(t.String({ format: "date-time", description: "Last token issued (updated at most once a minute)" })),
});
