/**
 * What the waitlist serves of variants, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import type * as S from "../schemas";
import type { VariantRow } from "../waitlists";

export type PublicVariantView = NonNullable<Static<typeof S.PublicWaitlist>["variant"]>;
export type VariantView = Static<typeof S.Variant>;

/** The variant a public page shows (the copy, not its weight). */
export const publicVariantView = (v: VariantRow): PublicVariantView => ({ id: v.id, name: v.name, display_name: v.display_name, description: v.description, cta_text: v.cta_text });

export const variantView = (r: VariantRow): VariantView => ({ ...r, weight: Number(r.weight), active: !!r.active });
