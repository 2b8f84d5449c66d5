/**
 * DKIM keys of domains: new RSA keys (private key encrypted with the secret box), selectors,
 * the key that signs now, and rotation. Rotation on an active domain keeps the old selector
 * signing until a DNS check sees the new record (checks.ts then drops the old key); on a
 * domain that is not active, and on the sandbox domain (no record to wait for), the key is
 * simply replaced.
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import type { AppContext } from "../../../context";
import { tx } from "../../../core/db";
import { randomHex } from "../../../core/ids";
import { audit } from "../../../kernel/tenancy";
import type { DomainsContext, DomainView } from "./context";
import * as store from "./store";

const genKeyPair = promisify(generateKeyPair);

/** A free selector: bkYYYYMM, then bkYYYYMMb ... z, then a random suffix. */
export function dkimSelector(ctx: AppContext, taken: (string | null)[]): string {
  const base = `bk${ctx.clock.iso().slice(0, 7).replace("-", "")}`;
  if (!taken.includes(base)) return base;
  for (let c = 98; c <= 122; c++) {
    const s = `${base}${String.fromCharCode(c)}`;
    if (!taken.includes(s)) return s;
  }
  return `${base}${randomHex(3)}`;
}

export async function newDkimKey(ctx: AppContext): Promise<{ publicPem: string; privateEnc: string }> {
  const { publicKey, privateKey } = await genKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicPem: publicKey as unknown as string, privateEnc: ctx.secretBox.encrypt(privateKey as unknown as string) };
}

/** The selector and decrypted private key that sign now: the previous ones while a rotation is pending. */
export function signingKey(ctx: AppContext, r: store.DomainRow): { selector: string; privateKeyPem: string } {
  const rotating = r.dkim_prev_selector !== null && r.dkim_prev_private_key !== null;
  return {
    selector: rotating ? r.dkim_prev_selector! : r.dkim_selector,
    privateKeyPem: ctx.secretBox.decrypt(rotating ? r.dkim_prev_private_key! : r.dkim_private_key),
  };
}

export class DkimRotation {
  constructor(private readonly c: DomainsContext) {}

  /** New selector and key. An active domain keeps signing with the old one until the new record is seen. */
  async rotate(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<DomainView> {
    const ctx = this.c.m.ctx;
    const ws = await this.c.m.guard(p, workspaceId, "mail.domain.write");
    await this.c.inWorkspace(ctx.db, ws.id, id);
    const key = await newDkimKey(ctx);
    return tx(ctx.db, async (t) => {
      const r = await this.c.inWorkspace(t, ws.id, id);
      const selector = dkimSelector(ctx, [r.dkim_selector, r.dkim_prev_selector]);
      const patch: store.DomainPatch = { dkim_selector: selector, dkim_public_key: key.publicPem, dkim_private_key: key.privateEnc };
      // The key that signs now keeps signing: the current one, or the previous one when an
      // earlier rotation has not been seen yet. A sandbox domain publishes no record to wait
      // for: its new key signs at once.
      const waits = r.status === "active" && r.sandbox === 0;
      if (waits && r.dkim_prev_selector === null) {
        patch.dkim_prev_selector = r.dkim_selector;
        patch.dkim_prev_public_key = r.dkim_public_key;
        patch.dkim_prev_private_key = r.dkim_private_key;
      } else if (!waits) {
        patch.dkim_prev_selector = null;
        patch.dkim_prev_public_key = null;
        patch.dkim_prev_private_key = null;
      }
      await store.updateDomain(t, r.id, patch, ctx.clock.iso());
      await audit(t, ctx, {
        actor: p,
        action: "mail.domain.dkim_rotate",
        workspaceId: ws.id,
        target: { type: "mail_domain", id: r.id },
        meta,
        metadata: { from: r.dkim_selector, to: selector },
      });
      return this.c.view((await store.domainById(t, r.id))!);
    });
  }
}
