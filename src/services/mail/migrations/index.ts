/**
 * The mail service's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0050 from "./0050_mail_domains.sql" with { type: "text" };
import m0051 from "./0051_mail_content.sql" with { type: "text" };
import m0052 from "./0052_mail_messages.sql" with { type: "text" };
import m0053 from "./0053_mail_sending.sql" with { type: "text" };
import m0054 from "./0054_mail_mailboxes.sql" with { type: "text" };
import m0055 from "./0055_mail_handover.sql" with { type: "text" };
import m0056 from "./0056_mail_sandbox.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0050_mail_domains", sql: m0050 },
  { name: "0051_mail_content", sql: m0051 },
  { name: "0052_mail_messages", sql: m0052 },
  { name: "0053_mail_sending", sql: m0053 },
  { name: "0054_mail_mailboxes", sql: m0054 },
  { name: "0055_mail_handover", sql: m0055 },
  { name: "0056_mail_sandbox", sql: m0056 },
];
