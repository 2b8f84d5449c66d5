/**
 * The mail service's settings (docs/operations.md "Configuration"): the DNS servers it resolves
 * with and how it delivers to recipients' MX hosts. MAIL_HOSTNAME, SMTP_* and MAIL_FROM are the
 * kernel's: the SMTP listener and system mail exist before and without the mail service.
 */
import { isIP } from "node:net";
import type { ServiceDeps } from "../../kernel/module";
import { bool, custom, int, list, type SettingValues } from "../../settings";

/** "ip", "ipv4:port", "[ipv6]" or "[ipv6]:port" (what dns.Resolver#setServers takes). */
function isDnsServer(s: string): boolean {
  const m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([0-9.]+)(?::(\d{1,5}))?$/.exec(s) ?? /^([0-9a-fA-F:]+)()$/.exec(s);
  if (!m || isIP(m[1]) === 0) return false;
  return !m[2] || (Number(m[2]) >= 1 && Number(m[2]) <= 65535);
}

const DNS_SERVERS = list("DNS_SERVERS", "", (s) => (isDnsServer(s) ? null : "is not an IP address with an optional port (1.1.1.1, 127.0.0.1:5353, [::1]:53)"));

export const MAIL_SETTINGS = {
  dnsServers: custom(["DNS_SERVERS"], "unset", "DNS servers for domain DNS checks and MX lookups; null: the system resolver", (r) => {
    const servers = DNS_SERVERS.read(r);
    return servers.length ? servers : null;
  }),
  mxPort: int("MAIL_MX_PORT", 25, 1, 65535, "Port of recipients' MX hosts for direct delivery (tests point it at a loopback sink)"),
  requireTls: bool("MAIL_REQUIRE_TLS", false, "Refuse to hand mail to a hop that does not offer STARTTLS (false: TLS when offered)"),
  inboundThreads: int("MAIL_INBOUND_THREADS", 0, 0, 16, "Worker threads that parse and authenticate received mail; 0: on the event loop"),
};

export type MailSettings = SettingValues<typeof MAIL_SETTINGS>;

/** The mail module's settings from its context (the parts take any module's context). */
export const mailSettings = (d: ServiceDeps): MailSettings => d.settings;
