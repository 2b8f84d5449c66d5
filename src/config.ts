/**
 * Environment -> typed, validated configuration. Every setting is optional for a local start;
 * a bad value stops start-up with one message listing every problem. The kernel's settings
 * are declared here; each service module declares its own (services/<name>/settings.ts) and
 * loadConfig reads both with one reader (src/settings.ts), so the list is one.
 *
 * `bunker serve` passes every module's declaration (it loads the app anyway); the commands
 * that must start fast without the app (healthcheck, backup, restore, version, listen) read
 * the kernel's only, and a module's bad setting is not theirs to refuse.
 */
import { isIP } from "node:net";
import { resolve } from "node:path";
import type { Level } from "./core/log";
import type { ProviderId } from "./core/oidc";
import { parseOriginPattern } from "./core/return-to";
import { bool, checkUrl, custom, group, int, list, oneOf, optional, readSettings, settingReader, text, url, type Env, type Settings, type SettingValues } from "./settings";

export const CONSOLE_SIGNUP_MODES = ["open", "invite_only", "closed"] as const;
export type ConsoleSignup = (typeof CONSOLE_SIGNUP_MODES)[number];
const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const satisfies readonly Level[];

export interface OidcProviderSetting {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export class ConfigError extends Error {}

/** "ip" or "ip/prefix". */
function isCidr(s: string): boolean {
  const [ip, bits, extra] = s.split("/");
  const v = isIP(ip);
  if (v === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128);
}

/** SMTP_PORT when it is not "off". */
const SMTP_PORT_NUMBER = int("SMTP_PORT", 2525, 0, 65535, "Inbound SMTP port");

const PORT = int("PORT", 8080, 0, 65535, "HTTP port");

const PUBLIC_URL = custom(["PUBLIC_URL"], "http://localhost:$PORT", "Externally visible origin: token issuers, links in mails, avatar URLs, setup link", (r) =>
  checkUrl(r, "PUBLIC_URL", r.get("PUBLIC_URL") ?? `http://localhost:${r.peek(PORT) || 8080}`, ["http:", "https:"]) ?? "http://localhost:8080");

const ADMIN_EMAIL = optional("BUNKER_ADMIN_EMAIL", "The operator account created on first start without the setup link (with BUNKER_ADMIN_PASSWORD)");

const SMTP_TLS_CERT = optional("SMTP_TLS_CERT", "PEM certificate chain of the inbound listener: STARTTLS is offered when it and SMTP_TLS_KEY are set");

// Providers idp_1..idp_3 of console sign-in: all three variables, or none.
const OIDC_PROVIDERS = custom(
  [1, 2, 3].flatMap((n) => [`IDP_${n}_ISSUER`, `IDP_${n}_CLIENT_ID`, `IDP_${n}_CLIENT_SECRET`]),
  "unset",
  "Console federated sign-in: IDP_<n>_ISSUER / _CLIENT_ID / _CLIENT_SECRET for n = 1..3",
  (r) => {
    const providers: Partial<Record<ProviderId, OidcProviderSetting>> = {};
    for (const n of [1, 2, 3] as const) {
      const keys = [`IDP_${n}_ISSUER`, `IDP_${n}_CLIENT_ID`, `IDP_${n}_CLIENT_SECRET`];
      const [issuer, clientId, clientSecret] = keys.map((k) => r.get(k) ?? "");
      if (!issuer && !clientId && !clientSecret) continue;
      if (!issuer || !clientId || !clientSecret) {
        r.problem(`${keys.join(", ")} go together`);
        continue;
      }
      let ok = false;
      try {
        const u = new URL(issuer);
        ok = (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password && !u.search && !u.hash;
      } catch {}
      if (!ok) r.problem(`IDP_${n}_ISSUER must be an http(s) URL without query or fragment (got "${issuer}")`);
      else providers[`idp_${n}`] = { issuer, clientId, clientSecret };
    }
    return providers;
  },
);

/** The kernel's settings, in the order their problems are listed. */
export const KERNEL_SETTINGS = {
  port: PORT,
  host: text("HOST", "0.0.0.0", "HTTP bind address"),
  env: oneOf("BUNKER_ENV", ["development", "production", "test"], (r) => (r.get("NODE_ENV") === "production" ? "production" : "development"), '"production" requires https webhook targets, Secure cookies, etc.', { shown: "development" }),
  publicUrl: PUBLIC_URL,
  logLevel: oneOf("LOG_LEVEL", LOG_LEVELS, "info", "Log level"),
  masterKey: optional(
    "MASTER_KEY",
    "32 bytes encrypting secrets at rest; null: DATA_DIR/master.key",
    (v) => (!/^[A-Za-z0-9+/_-]{43,}={0,2}$/.test(v) && !/^[0-9a-fA-F]{64}$/.test(v) ? "MASTER_KEY must be 32 bytes as 64 hex characters or base64" : null),
    "key file",
  ),
  /** Names are checked by createApp against the service modules. */
  defaultServices: custom(["DEFAULT_SERVICES"], "all", "Services enabled on new workspaces; null: every mounted service", (r) =>
    r.get("DEFAULT_SERVICES")?.split(",").map((s) => s.trim()).filter(Boolean) ?? null),
  oauthReturnToOrigins: list("OAUTH_RETURN_TO_ORIGINS", "Origins allowed as console federated sign-in return_to", (o) =>
    !/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d+)?$/.test(o) || !parseOriginPattern(o) ? "is not an origin (a wildcard needs a domain of two or more labels: https://*.example.com)" : null),
  oidcProviders: OIDC_PROVIDERS,
  adminEmail: ADMIN_EMAIL,
  adminPassword: custom(["BUNKER_ADMIN_PASSWORD"], "unset", "The operator account's password (with BUNKER_ADMIN_EMAIL)", (r) => {
    const v = r.get("BUNKER_ADMIN_PASSWORD") ?? null;
    if ((r.peek(ADMIN_EMAIL) === null) !== (v === null)) r.problem("BUNKER_ADMIN_EMAIL and BUNKER_ADMIN_PASSWORD go together");
    if (v !== null && v.length < 8) r.problem("BUNKER_ADMIN_PASSWORD must be at least 8 characters");
    return v;
  }),
  // Default invite_only: a console on a public address should not take anonymous sign-ups
  // (Grafana ships allow_sign_up=false, GitLab new instances require approval); invited
  // teammates can still sign up. The operator never depends on it: setup is separate.
  consoleSignup: oneOf("CONSOLE_SIGNUP", CONSOLE_SIGNUP_MODES, "invite_only", "Who may create a console account without the setup link: anyone, invited addresses, nobody", { quoteGot: true }),
  // "off" (or 0) runs without the inbound SMTP listener, e.g. a second node or no MX at all.
  smtpPort: custom(["SMTP_PORT"], "2525", "Inbound SMTP port; null when SMTP_PORT=off (or 0): no listener", (r) =>
    r.get("SMTP_PORT")?.toLowerCase() === "off" ? null : SMTP_PORT_NUMBER.read(r) || null),
  // The SMTP listener's name (greeting, HELO) before the app exists; the mail service tells customers to point MX and SPF at it.
  mailHostname: custom(["MAIL_HOSTNAME"], "PUBLIC_URL's host", "Public host name of this server's SMTP listener: MX and SPF targets of mail domains", (r) => {
    const name = (r.get("MAIL_HOSTNAME") ?? new URL(r.peek(PUBLIC_URL)).hostname).toLowerCase().replace(/\.$/, "");
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name)) r.problem(`MAIL_HOSTNAME must be a host name (got "${name}")`);
    return name;
  }),
  smtpTlsCert: SMTP_TLS_CERT,
  smtpTlsKey: custom(["SMTP_TLS_KEY"], "unset", "PEM key of the inbound listener (with SMTP_TLS_CERT)", (r) => {
    const v = r.get("SMTP_TLS_KEY") ?? null;
    if ((r.peek(SMTP_TLS_CERT) === null) !== (v === null)) r.problem("SMTP_TLS_CERT and SMTP_TLS_KEY go together (PEM file paths)");
    return v;
  }),
  metricsToken: optional("METRICS_TOKEN", "When set, /metrics answers only to `Authorization: Bearer <token>`", (v) => (v.length < 16 ? "METRICS_TOKEN must be at least 16 characters" : null)),
  nodeId: optional(
    "NODE_ID",
    "This node's name, stable across restarts: work it had claimed when it stopped (mail it was sending, webhook deliveries) is reclaimed at its next start instead of waiting out the claim's lease. null: the name kept in DATA_DIR (made once)",
    (v) => (!/^[A-Za-z0-9._-]{1,64}$/.test(v) ? `NODE_ID must be 1 to 64 letters, digits, dots, dashes or underscores (got "${v}")` : null),
    "the name kept in DATA_DIR/node-id",
  ),
  trustedProxies: list("TRUSTED_PROXIES", "Reverse proxies (IPs or CIDRs) whose X-Forwarded-For names the client: requests from them count against the address the header gives, not the proxy's", (p) =>
    isCidr(p) ? null : "is not an IP address or CIDR range (10.0.0.0/8, ::1)"),
  databaseUrl: url("DATABASE_URL", ["postgres:", "postgresql:"], "PostgreSQL (postgres://...) for several nodes; null: the embedded SQLite file DATA_DIR/bunker.db"),
  objectStore: oneOf("OBJECT_STORE", ["local", "s3"], (r) => (r.get("S3_BUCKET") ? "s3" : "local"), 'Object store: "local" folder under dataDir, or "s3" through Bun.s3 (S3_* variables)', { shown: "local" }),
  dataDir: custom(["DATA_DIR"], "./data", "SQLite file, objects, master key", (r) => resolve(r.get("DATA_DIR") ?? "./data")),
  pgPoolSize: int("PG_POOL_SIZE", 10, 1, 200, "Connections each node keeps to PostgreSQL"),
  // How long an in-process cache (API-key and token reads, policies) may answer from memory
  // after another node changed what it holds. Changes made on this node invalidate at once;
  // on PostgreSQL other nodes also hear a NOTIFY, and this is the bound when one is missed.
  cacheTtlMs: int("CACHE_TTL_MS", 5_000, 0, 300_000, "The longest an in-process cache entry is served after another node changed it"),
  smtpRelayUrl: url("SMTP_RELAY_URL", ["smtp:", "smtps:"], "Outbound relay for system mails; null: kept in the outbox and logged"),
  mailFrom: text("MAIL_FROM", "Bunker <no-reply@localhost>", "Sender of system mails"),
  // Mail service, part 2 (inbound SMTP listener as MX; issue 14): the listener's limits.
  smtpMaxMessageBytes: int("SMTP_MAX_MESSAGE_BYTES", 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024, "Largest message the listener accepts; advertised as SIZE"),
  smtpMaxConnectionsPerIp: int("SMTP_MAX_CONNECTIONS_PER_IP", 20, 1, 10_000, "Simultaneous connections per client IP; more answer 421"),
  smtpIdleTimeoutMs: int("SMTP_IDLE_TIMEOUT_MS", 60_000, 1_000, 3_600_000, "Idle time before the listener closes a session"),
  allowPrivateTargets: bool("ALLOW_PRIVATE_TARGETS", false, "Development only: outbound calls may reach loopback and private addresses"),
  shutdownGraceMs: int("SHUTDOWN_GRACE_MS", 10_000, 0, 300_000, "On SIGTERM, how long in-flight requests may take before their connections are closed (ms)"),
  s3Bucket: optional("S3_BUCKET", "Bucket for OBJECT_STORE=s3"),
  accessTokenTtl: int("ACCESS_TOKEN_TTL", 3600, 60, 86400, "Access-token lifetime of console sessions, seconds"),
  // Password hashing cost (argon2id); tests may lower it, production keeps OWASP's.
  argon2MemoryKiB: int("ARGON2_MEMORY_KIB", 19456, 1024, 1048576, "argon2id memory cost, KiB"),
  argon2TimeCost: int("ARGON2_TIME_COST", 2, 1, 10, "argon2id time cost"),
  maxBodyBytes: int("MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024, "Request-body cap of JSON routes, bytes; uploads declare their own (ServiceModule.bodyRoutes)"),
  // Slow request bodies: a body gets this long, plus one second per `bodyMinRate` bytes
  // received, to arrive; then 408 and the connection closes.
  bodyTimeoutMs: int("HTTP_BODY_TIMEOUT_MS", 10_000, 100, 3_600_000, "Time a request body gets to arrive (plus one second per HTTP_BODY_MIN_RATE bytes)"),
  bodyMinRate: int("HTTP_BODY_MIN_RATE", 1024, 1, 1024 * 1024 * 1024, "Bytes a second that earn a slow body more time"),
  maxRequestsPerClient: int("HTTP_MAX_REQUESTS_PER_CLIENT", 256, 0, 1_000_000, "Requests one client address may have in progress at once; more answer 429. 0: no cap"),
  // Sign-ups and stranger-triggered mail (issue 29), for the console and every Auth App alike
  // (the identity both realms share), per sliding hour; 0 switches one off. One person signs up
  // once and asks for a mail or two; the defaults leave room for a classroom or office behind
  // one address (30 sign-ups, 50 mails an hour: Auth0's per-address number for mailed codes)
  // and for a busy launch (1,000 new users an hour per App), while a flood gets that many an
  // hour instead of dozens a second, each one an argon2 hash or a mail. 5 mails of a kind to
  // one inbox an hour is what a person who did not get one retries; a flood of resets stops there.
  strangerLimits: group("Sign-ups and mail a stranger can trigger, per sliding hour; 0 switches one off", {
    signupsPerAddress: int("SIGNUPS_PER_ADDRESS_PER_HOUR", 30, 0, 10_000_000, "Public sign-ups from one client address, all Apps together (the console counted apart)"),
    signupsPerApp: int("SIGNUPS_PER_APP_PER_HOUR", 1000, 0, 10_000_000, "Public sign-ups per App from every address (the console counts as one App)"),
    mailPerAddress: int("MAIL_PER_ADDRESS_PER_HOUR", 50, 0, 10_000_000, "Requests that mail someone (reset, verification, MFA code, invites) from one client address, per App"),
    mailPerRecipient: int("MAIL_PER_RECIPIENT_PER_HOUR", 5, 0, 10_000_000, "Mails of one kind to one address, per App"),
  }),
} satisfies Settings;

export interface Config extends SettingValues<typeof KERNEL_SETTINGS> {
  /** The settings of the modules loadConfig was given, by module name. */
  settings: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /**
   * The variables it was read from: createApp reads from them the settings of the modules
   * loadConfig was not given (a test's config, then an app of any module list).
   */
  vars: Readonly<Env>;
}

/** The one shape of a configuration refusal: every problem, one per line. */
export const invalidConfiguration = (problems: string[]) => new ConfigError("Invalid configuration:\n  - " + problems.join("\n  - "));

/** The kernel's settings and those of `modules` (declarations by module name): one list of problems. */
export function loadConfig(env: Env = process.env, modules: Readonly<Record<string, Settings>> = {}): Config {
  const problems: string[] = [];
  const r = settingReader(env, problems);
  const kernel = readSettings(KERNEL_SETTINGS, r);
  const settings = Object.fromEntries(Object.entries(modules).map(([name, d]) => [name, readSettings(d, r)]));
  if (problems.length) throw invalidConfiguration(problems);
  return { ...kernel, settings, vars: { ...env } };
}

/** Each module's settings: the ones loadConfig read, else read now from the config's variables (ConfigError listing every problem). */
export function moduleSettings(config: Config, modules: Readonly<Record<string, Settings>>): Config["settings"] {
  const problems: string[] = [];
  const r = settingReader(config.vars, problems);
  const out = Object.fromEntries(Object.entries(modules).map(([name, d]) => [name, name in config.settings ? config.settings[name] : readSettings(d, r)]));
  if (problems.length) throw invalidConfiguration(problems);
  return out;
}
