/**
 * The community service's migrations, imported as text so `bun build --compile` embeds them; pg/ holds
 * the PostgreSQL variants. The rules (naming, append-only) are in src/kernel/migrations/index.ts;
 * test/core/migrations.test.ts checks that every .sql file here is listed.
 */
import type { Migration } from "../../../core/store/migrations";
import m0040 from "./0040_social_communities.sql" with { type: "text" };
import m0041 from "./0041_social_actors.sql" with { type: "text" };
import m0042 from "./0042_social_graph.sql" with { type: "text" };
import m0043 from "./0043_social_hashtags.sql" with { type: "text" };
import m0044 from "./0044_social_conversations.sql" with { type: "text" };
import m0045 from "./0045_social_conversation_seq.sql" with { type: "text" };
import m0046 from "./0046_social_posts.sql" with { type: "text" };
import m0047 from "./0047_social_moderation.sql" with { type: "text" };
import m0048 from "./0048_social_hides.sql" with { type: "text" };
import m20261129021500 from "./20261129021500_social_ban_ends.sql" with { type: "text" };

export const migrations: readonly Migration[] = [
  { name: "0040_social_communities", sql: m0040 },
  { name: "0041_social_actors", sql: m0041 },
  { name: "0042_social_graph", sql: m0042 },
  { name: "0043_social_hashtags", sql: m0043 },
  { name: "0044_social_conversations", sql: m0044 },
  { name: "0045_social_conversation_seq", sql: m0045 },
  { name: "0046_social_posts", sql: m0046 },
  { name: "0047_social_moderation", sql: m0047 },
  { name: "0048_social_hides", sql: m0048 },
  { name: "20261129021500_social_ban_ends", sql: m20261129021500 },
];
