/**
 * The DNS records a domain needs (its dns_instructions) and the shape of what a check found
 * for each. Required: ownership TXT for every intent; SPF and DKIM for send intents; MX for
 * receive intents. DMARC is recommended (checked and reported, not required).
 */
import type * as store from "./store";

export const RECORD_TTL = 3600;
/** The ownership TXT record lives at this label under the domain. */
export const OWNERSHIP_LABEL = "_bunker-verification";

export type Purpose = "ownership" | "spf" | "dkim" | "dmarc" | "mx";

export interface DnsInstruction {
  purpose: Purpose;
  type: "TXT" | "MX";
  host: string;
  value: string;
  ttl: number;
  priority: number;
  /** Needed for the domain to become active (dmarc: recommended only). */
  required: boolean;
  note: string | null;
}

export interface CheckResult {
  type: "TXT" | "MX";
  host: string;
  required: boolean;
  found: boolean;
  expected: string;
  observed: string[];
  /** The lookup failed (timeout, SERVFAIL): found is false because nothing could be read. */
  error?: string;
}

export type CheckResults = Partial<Record<Purpose | "dkim_previous", CheckResult>>;

const sends = (i: store.DomainIntent) => i === "send" || i === "send_receive";
const receives = (i: store.DomainIntent) => i === "receive" || i === "send_receive";

/** Splits a TXT value into character-strings of at most 255 bytes, written as the quoted zone-file form when more than one. */
export function splitTxt(value: string): string {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length <= 255) return value;
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) parts.push(`"${bytes.subarray(i, i + 255).toString("utf8")}"`);
  return parts.join(" ");
}

/** The base64 key of a PEM public key (the DKIM p= tag). */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");

export const dkimValue = (publicPem: string) => `v=DKIM1; k=rsa; p=${pemBody(publicPem)}`;
/** The p= tag of a DKIM record ("" when absent). */
export const dkimP = (s: string) => (/(?:^|;)\s*p\s*=\s*([^;]*)/.exec(s)?.[1] ?? "").replace(/\s+/g, "");

/** The records to publish for a domain; `host` is this server's mail hostname (SPF a:, MX). */
export function dnsInstructions(host: string, r: Pick<store.DomainRow, "fqdn" | "intent" | "verification_token" | "dkim_selector" | "dkim_public_key">): DnsInstruction[] {
  const out: DnsInstruction[] = [
    {
      purpose: "ownership",
      type: "TXT",
      host: `${OWNERSHIP_LABEL}.${r.fqdn}`,
      value: `bunker-verification=${r.verification_token}`,
      ttl: RECORD_TTL,
      priority: 0,
      required: true,
      note: "Proves that this workspace controls the domain.",
    },
  ];
  if (sends(r.intent)) {
    out.push(
      {
        purpose: "spf",
        type: "TXT",
        host: r.fqdn,
        value: `v=spf1 a:${host} ~all`,
        ttl: RECORD_TTL,
        priority: 0,
        required: true,
        note: `If the domain already has an SPF record, add "a:${host}" to it instead of publishing a second one (one v=spf1 record per name).`,
      },
      {
        purpose: "dkim",
        type: "TXT",
        host: `${r.dkim_selector}._domainkey.${r.fqdn}`,
        value: splitTxt(dkimValue(r.dkim_public_key)),
        ttl: RECORD_TTL,
        priority: 0,
        required: true,
        note: "One TXT record made of several quoted strings of at most 255 bytes each; most DNS providers take the whole value and split it themselves.",
      },
      {
        purpose: "dmarc",
        type: "TXT",
        host: `_dmarc.${r.fqdn}`,
        value: "v=DMARC1; p=none;",
        ttl: RECORD_TTL,
        priority: 0,
        required: false,
        note: "Recommended starter policy: p=none only monitors. Add rua=mailto:... for reports, and move to p=quarantine or p=reject once reports show all your mail passes. Keep an existing DMARC record.",
      },
    );
  }
  if (receives(r.intent)) {
    out.push({
      purpose: "mx",
      type: "MX",
      host: r.fqdn,
      value: host,
      ttl: RECORD_TTL,
      priority: 10,
      required: true,
      note: "Routes mail for the domain to this server's SMTP listener.",
    });
  }
  return out;
}
