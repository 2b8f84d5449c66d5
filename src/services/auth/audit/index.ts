/** What the audit log's reader uses of the trail's store (the other features record entries through record.ts). */
export { listAuthAudit, type AuditFilter, type AuthAuditRow } from "./store";
