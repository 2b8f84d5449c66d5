/** Domain names as the domain routes accept them (docs/mail.md, "Reference" > "Domains"). */
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { invalidField } from "../../../core/errors";

export const FQDN_MAX = 253;

const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Validates and normalises a domain name: IDNA to ASCII, lower case, one trailing dot
 * dropped. Throws 400 VALIDATION_ERROR (field fqdn) with the reason.
 */
export function normaliseFqdn(input: unknown): string {
  if (typeof input !== "string" || input.trim() === "") throw invalidField("fqdn", "required");
  let s = input.trim();
  if (s.endsWith(".")) s = s.slice(0, -1);
  const bare = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
  if (isIP(bare) !== 0) throw invalidField("fqdn", "must be a domain name, not an IP address");
  if (s.length > FQDN_MAX * 4 || /[\s/\\:@?#*[\]]/.test(s)) throw invalidField("fqdn", "must be a domain name (letters, digits, hyphens and dots)");
  const ascii = domainToASCII(s).toLowerCase();
  if (!ascii) throw invalidField("fqdn", "is not a valid internationalised domain name");
  if (ascii.length > FQDN_MAX) throw invalidField("fqdn", `at most ${FQDN_MAX} characters (in ASCII form)`);
  const labels = ascii.split(".");
  if (labels.length < 2) throw invalidField("fqdn", "needs at least two labels (e.g. mail.example.com)");
  for (const l of labels) {
    if (!LABEL_RE.test(l)) throw invalidField("fqdn", `label "${l}" must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen`);
  }
  // An all-numeric top label is an IPv4 address in disguise (1.2.3.4 variants, 0x..., etc.).
  if (/^[0-9]+$/.test(labels[labels.length - 1]) || /^0x[0-9a-f]*$/.test(labels[labels.length - 1])) {
    throw invalidField("fqdn", "must be a domain name, not an IP address");
  }
  return ascii;
}

/** Names under sandbox.<mail hostname> belong to sandbox domains (sandbox/): no other domain may take one. */
export const isSandboxName = (fqdn: string, mailHostname: string) => fqdn.endsWith(`.sandbox.${mailHostname.toLowerCase()}`);
