/**
 * Environment -> typed, validated configuration. Every setting is optional for a
 * local start; a bad value stops start-up with one message listing every problem.
 */
import { isIP } from "node:net";
import { resolve } from "node:path";
import type { Level } from "./core/log";
import type { ProviderId } from "./core/oidc";
import { parseOriginPattern } from "./core/return-to";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL (postgres://...) for several nodes; null: the embedded SQLite file DATA_DIR/bunker.db. */
  databaseUrl: string | null;
  /** Connections each node keeps to PostgreSQL. */
  pgPoolSize: number;
  /**
   * How long an in-process cache (API-key and token reads, policies) may answer from memory
   * after another node changed what it holds. Changes made on this node invalidate at once;
   * on PostgreSQL other nodes also hear a NOTIFY, and this is the bound when one is missed.
   */
  cacheTtlMs: number;
  /**
   * This node's name (NODE_ID), stable across restarts: work it had claimed when it stopped
   * (mail it was sending, webhook deliveries) is reclaimed at its next start instead of
   * waiting out the claim's lease. null: the name kept in DATA_DIR (made once).
   */
  nodeId: string | null;
  publicUrl: string;
  masterKey: string | null;
  /** Inbound SMTP port; null when SMTP_PORT=off (or 0): no listener. */
  smtpPort: number | null;
  smtpRelayUrl: string | null;
  /** Public host name of this server's SMTP listener (MAIL_HOSTNAME; default: PUBLIC_URL's host): MX and SPF targets of mail domains. */
  mailHostname: string;
  /** DNS servers ("ip" or "ip:port", DNS_SERVERS comma list) for mail DNS checks and MX lookups; null: the system resolver. */
  dnsServers: string[] | null;
  /** Port of recipients' MX hosts for direct delivery (MAIL_MX_PORT, default 25; tests point it at a loopback sink). */
  mailMxPort: number;
  /** Refuse to hand mail to a hop that does not offer STARTTLS (MAIL_REQUIRE_TLS, default false: TLS when offered). */
  mailRequireTls: boolean;
  mailFrom: string;
  // Mail service, part 2 (inbound SMTP listener as MX; issue 14).
  /** Largest message the listener accepts (SMTP_MAX_MESSAGE_BYTES, default 25 MiB); advertised as SIZE. */
  smtpMaxMessageBytes: number;
  /** Simultaneous connections per client IP (SMTP_MAX_CONNECTIONS_PER_IP, default 20); more answer 421. */
  smtpMaxConnectionsPerIp: number;
  /** Idle time before the listener closes a session (SMTP_IDLE_TIMEOUT_MS, default 60000). */
  smtpIdleTimeoutMs: number;
  /** PEM file paths (SMTP_TLS_CERT, SMTP_TLS_KEY): STARTTLS is offered when both are set. */
  smtpTlsCert: string | null;
  smtpTlsKey: string | null;
  oauthReturnToOrigins: string[];
  /** Console federated sign-in: IDP_<n>_ISSUER / _CLIENT_ID / _CLIENT_SECRET for n = 1..3. */
  oidcProviders: Partial<Record<ProviderId, OidcProviderSetting>>;
  allowPrivateTargets: boolean;
  adminEmail: string | null;
  adminPassword: string | null;
  /** Who may create a console account without the setup link: anyone, invited addresses, nobody. */
  consoleSignup: ConsoleSignup;
  /** When set, /metrics answers only to `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** On SIGTERM, how long in-flight requests may take before their connections are closed (ms). */
  shutdownGraceMs: number;
  /** Services enabled on new workspaces; null: every mounted service. Names are checked by createApp against the service modules. */
  defaultServices: string[] | null;
  logLevel: Level;
  /** Object store: "local" folder under dataDir, or "s3" through Bun.s3 (S3_* variables). */
  objectStore: "local" | "s3";
  s3Bucket: string | null;
  /** Access-token lifetime of console sessions, seconds. */
  accessTokenTtl: number;
  /** Password hashing cost (argon2id); tests may lower it, production keeps OWASP's. */
  argon2MemoryKiB: number;
  argon2TimeCost: number;
  /** Request-body cap of JSON routes, bytes (MAX_BODY_BYTES); uploads declare their own in app.ts. */
  maxBodyBytes: number;
  /**
   * Slow request bodies (HTTP_BODY_TIMEOUT_MS, HTTP_BODY_MIN_RATE): a body gets this long, plus
   * one second per `bodyMinRate` bytes received, to arrive; then 408 and the connection closes.
   */
  bodyTimeoutMs: number;
  bodyMinRate: number;
  /** Requests one client address may have in progress at once (HTTP_MAX_REQUESTS_PER_CLIENT); more answer 429. 0: no cap. */
  maxRequestsPerClient: number;
  /**
   * Reverse proxies (TRUSTED_PROXIES: IPs or CIDRs) whose X-Forwarded-For names the client:
   * requests from them count against the address the header gives, not the proxy's.
   */
  trustedProxies: string[];
  // Waitlist service (issue 16).
  /** Public sign-ups one client address may make per waitlist per minute (WAITLIST_SIGNUPS_PER_IP_PER_MINUTE, default 20). */
  waitlistSignupsPerIpPerMinute: number;
  /** "production" requires https webhook targets, Secure cookies, etc. */
  env: "development" | "production" | "test";
  /** Extraction jobs (trawl): OpenAI-compatible endpoint (LLM_BASE_URL, null: offline heuristic extractor), key, models per tier, workers per node. */
  trawl: { llmBaseUrl: string | null; llmApiKey: string | null; llmModel: string; llmModelPro: string; concurrency: number };
  // Card board (tack): per-API-key requests per minute (TACK_RATE_WRITES / _READS / _BATCH); 0 switches a limit off.
  tackRateLimits: { writes: number; reads: number; batch: number };
  /**
   * Sign-ups and mail a stranger can trigger (console and Auth Apps; issue 29), per sliding hour; 0 switches one off.
   * signupsPerAddress (SIGNUPS_PER_ADDRESS_PER_HOUR): public sign-ups from one client address, all Apps
   * together (the console counted apart); signupsPerApp (SIGNUPS_PER_APP_PER_HOUR): per App from every
   * address (the console counts as one App); mailPerAddress (MAIL_PER_ADDRESS_PER_HOUR): requests that
   * mail someone (reset, verification, MFA code, invites) from one client address, per App;
   * mailPerRecipient (MAIL_PER_RECIPIENT_PER_HOUR): mails of one kind to one address, per App.
   */
  strangerLimits: { signupsPerAddress: number; signupsPerApp: number; mailPerAddress: number; mailPerRecipient: number };
}

export const CONSOLE_SIGNUP_MODES = ["open", "invite_only", "closed"] as const;
export type ConsoleSignup = (typeof CONSOLE_SIGNUP_MODES)[number];

export interface OidcProviderSetting {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** "ip", "ipv4:port", "[ipv6]" or "[ipv6]:port" (what dns.Resolver#setServers takes). */
function isDnsServer(s: string): boolean {
  const m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([0-9.]+)(?::(\d{1,5}))?$/.exec(s) ?? /^([0-9a-fA-F:]+)()$/.exec(s);
  if (!m || isIP(m[1]) === 0) return false;
  return !m[2] || (Number(m[2]) >= 1 && Number(m[2]) <= 65535);
}

/** "ip" or "ip/prefix". */
function isCidr(s: string): boolean {
  const [ip, bits, extra] = s.split("/");
  const v = isIP(ip);
  if (v === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128);
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (k: string, def: string) => (env[k] === undefined || env[k] === "" ? def : env[k]!);
  const int = (k: string, def: number, min: number, max: number) => {
    const raw = env[k];
    if (raw === undefined || raw === "") return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${k} must be an integer from ${min} to ${max} (got "${raw}")`);
      return def;
    }
    return n;
  };
  const bool = (k: string, def: boolean) => {
    const raw = env[k];
    if (raw === undefined || raw === "") return def;
    if (["1", "true", "yes", "on"].includes(raw.toLowerCase())) return true;
    if (["0", "false", "no", "off"].includes(raw.toLowerCase())) return false;
    problems.push(`${k} must be true or false (got "${raw}")`);
    return def;
  };
  const url = (k: string, raw: string | null, protocols: string[]) => {
    if (raw === null) return null;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error();
      return raw.replace(/\/+$/, "");
    } catch {
      problems.push(`${k} must be a URL with scheme ${protocols.join(" or ")} (got "${raw}")`);
      return null;
    }
  };

  const port = int("PORT", 8080, 0, 65535);
  const host = str("HOST", "0.0.0.0");
  const envName = str("BUNKER_ENV", env.NODE_ENV === "production" ? "production" : "development");
  if (!["development", "production", "test"].includes(envName)) problems.push(`BUNKER_ENV must be development, production or test`);
  const publicUrl = url("PUBLIC_URL", str("PUBLIC_URL", `http://localhost:${port || 8080}`), ["http:", "https:"]) ?? "http://localhost:8080";

  const logLevel = str("LOG_LEVEL", "info") as Level;
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) problems.push(`LOG_LEVEL must be debug, info, warn, error or silent`);

  const masterKey = env.MASTER_KEY || null;
  if (masterKey !== null && !/^[A-Za-z0-9+/_-]{43,}={0,2}$/.test(masterKey) && !/^[0-9a-fA-F]{64}$/.test(masterKey)) {
    problems.push("MASTER_KEY must be 32 bytes as 64 hex characters or base64");
  }

  const defaultServices = env.DEFAULT_SERVICES ? env.DEFAULT_SERVICES.split(",").map((s) => s.trim()).filter(Boolean) : null;

  const origins = str("OAUTH_RETURN_TO_ORIGINS", "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const o of origins) {
    if (!/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d+)?$/.test(o) || !parseOriginPattern(o)) problems.push(`OAUTH_RETURN_TO_ORIGINS: "${o}" is not an origin (a wildcard needs a domain of two or more labels: https://*.example.com)`);
  }

  // Providers idp_1..idp_3 of console sign-in: all three variables, or none.
  const oidcProviders: Config["oidcProviders"] = {};
  for (const n of [1, 2, 3] as const) {
    const id = `idp_${n}` as ProviderId;
    const keys = [`IDP_${n}_ISSUER`, `IDP_${n}_CLIENT_ID`, `IDP_${n}_CLIENT_SECRET`];
    const [issuer, clientId, clientSecret] = keys.map((k) => env[k] || "");
    if (!issuer && !clientId && !clientSecret) continue;
    if (!issuer || !clientId || !clientSecret) {
      problems.push(`${keys.join(", ")} go together`);
      continue;
    }
    let ok = false;
    try {
      const u = new URL(issuer);
      ok = (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password && !u.search && !u.hash;
    } catch {}
    if (!ok) problems.push(`IDP_${n}_ISSUER must be an http(s) URL without query or fragment (got "${issuer}")`);
    else oidcProviders[id] = { issuer, clientId, clientSecret };
  }

  const adminEmail = env.BUNKER_ADMIN_EMAIL || null;
  const adminPassword = env.BUNKER_ADMIN_PASSWORD || null;
  if ((adminEmail === null) !== (adminPassword === null)) problems.push("BUNKER_ADMIN_EMAIL and BUNKER_ADMIN_PASSWORD go together");
  if (adminPassword !== null && adminPassword.length < 8) problems.push("BUNKER_ADMIN_PASSWORD must be at least 8 characters");

  // Default invite_only: a console on a public address should not take anonymous sign-ups
  // (Grafana ships allow_sign_up=false, GitLab new instances require approval); invited
  // teammates can still sign up. The operator never depends on it: setup is separate.
  const consoleSignup = str("CONSOLE_SIGNUP", "invite_only") as ConsoleSignup;
  if (!CONSOLE_SIGNUP_MODES.includes(consoleSignup)) problems.push(`CONSOLE_SIGNUP must be open, invite_only or closed (got "${consoleSignup}")`);

  // "off" (or 0) runs without the inbound SMTP listener, e.g. a second node or no MX at all.
  const smtpRaw = str("SMTP_PORT", "2525").toLowerCase();
  const smtpPort = smtpRaw === "off" ? null : int("SMTP_PORT", 2525, 0, 65535) || null;

  const mailHostname = str("MAIL_HOSTNAME", new URL(publicUrl).hostname).toLowerCase().replace(/\.$/, "");
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(mailHostname)) {
    problems.push(`MAIL_HOSTNAME must be a host name (got "${mailHostname}")`);
  }
  const dnsServers = env.DNS_SERVERS ? env.DNS_SERVERS.split(",").map((s) => s.trim()).filter(Boolean) : null;
  for (const s of dnsServers ?? []) {
    if (!isDnsServer(s)) problems.push(`DNS_SERVERS: "${s}" is not an IP address with an optional port (1.1.1.1, 127.0.0.1:5353, [::1]:53)`);
  }

  // Mail service, part 2 (issue 14): the inbound listener's limits and STARTTLS certificate.
  const smtpTlsCert = env.SMTP_TLS_CERT || null;
  const smtpTlsKey = env.SMTP_TLS_KEY || null;
  if ((smtpTlsCert === null) !== (smtpTlsKey === null)) problems.push("SMTP_TLS_CERT and SMTP_TLS_KEY go together (PEM file paths)");

  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16) problems.push("METRICS_TOKEN must be at least 16 characters");

  if (env.NODE_ID && !/^[A-Za-z0-9._-]{1,64}$/.test(env.NODE_ID)) problems.push(`NODE_ID must be 1 to 64 letters, digits, dots, dashes or underscores (got "${env.NODE_ID}")`);
  const trustedProxies = str("TRUSTED_PROXIES", "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const p of trustedProxies) if (!isCidr(p)) problems.push(`TRUSTED_PROXIES: "${p}" is not an IP address or CIDR range (10.0.0.0/8, ::1)`);

  const databaseUrl = url("DATABASE_URL", env.DATABASE_URL || null, ["postgres:", "postgresql:"]);

  const objectStore = str("OBJECT_STORE", env.S3_BUCKET ? "s3" : "local");
  if (!["local", "s3"].includes(objectStore)) problems.push(`OBJECT_STORE must be local or s3`);

  const config: Config = {
    port,
    host,
    dataDir: resolve(str("DATA_DIR", "./data")),
    databaseUrl,
    pgPoolSize: int("PG_POOL_SIZE", 10, 1, 200),
    cacheTtlMs: int("CACHE_TTL_MS", 5_000, 0, 300_000),
    nodeId: env.NODE_ID || null,
    publicUrl,
    masterKey,
    smtpPort,
    smtpRelayUrl: url("SMTP_RELAY_URL", env.SMTP_RELAY_URL || null, ["smtp:", "smtps:"]),
    mailHostname,
    dnsServers: dnsServers && dnsServers.length ? dnsServers : null,
    mailMxPort: int("MAIL_MX_PORT", 25, 1, 65535),
    mailRequireTls: bool("MAIL_REQUIRE_TLS", false),
    mailFrom: str("MAIL_FROM", "Bunker <no-reply@localhost>"),
    smtpMaxMessageBytes: int("SMTP_MAX_MESSAGE_BYTES", 25 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    smtpMaxConnectionsPerIp: int("SMTP_MAX_CONNECTIONS_PER_IP", 20, 1, 10_000),
    smtpIdleTimeoutMs: int("SMTP_IDLE_TIMEOUT_MS", 60_000, 1_000, 3_600_000),
    smtpTlsCert,
    smtpTlsKey,
    oauthReturnToOrigins: origins,
    oidcProviders,
    allowPrivateTargets: bool("ALLOW_PRIVATE_TARGETS", false),
    adminEmail,
    adminPassword,
    consoleSignup,
    metricsToken,
    shutdownGraceMs: int("SHUTDOWN_GRACE_MS", 10_000, 0, 300_000),
    defaultServices,
    logLevel,
    objectStore: objectStore as "local" | "s3",
    s3Bucket: env.S3_BUCKET || null,
    accessTokenTtl: int("ACCESS_TOKEN_TTL", 3600, 60, 86400),
    argon2MemoryKiB: int("ARGON2_MEMORY_KIB", 19456, 1024, 1048576),
    argon2TimeCost: int("ARGON2_TIME_COST", 2, 1, 10),
    maxBodyBytes: int("MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    bodyTimeoutMs: int("HTTP_BODY_TIMEOUT_MS", 10_000, 100, 3_600_000),
    bodyMinRate: int("HTTP_BODY_MIN_RATE", 1024, 1, 1024 * 1024 * 1024),
    maxRequestsPerClient: int("HTTP_MAX_REQUESTS_PER_CLIENT", 256, 0, 1_000_000),
    trustedProxies,
    // Waitlist service (issue 16).
    waitlistSignupsPerIpPerMinute: int("WAITLIST_SIGNUPS_PER_IP_PER_MINUTE", 20, 1, 1_000_000),
    env: envName as Config["env"],
    // Extraction jobs (trawl): LLM endpoint and worker concurrency.
    trawl: {
      llmBaseUrl: url("LLM_BASE_URL", env.LLM_BASE_URL || null, ["http:", "https:"]),
      llmApiKey: env.LLM_API_KEY || null,
      llmModel: str("LLM_MODEL", "gpt-4o-mini"),
      llmModelPro: str("LLM_MODEL_PRO", str("LLM_MODEL", "gpt-4o")),
      concurrency: int("TRAWL_CONCURRENCY", 2, 1, 64),
    },
    // Card board (tack): the spec's per-key limits; raised (or 0: off) for benchmarks.
    tackRateLimits: {
      writes: int("TACK_RATE_WRITES", 200, 0, 10_000_000),
      reads: int("TACK_RATE_READS", 600, 0, 10_000_000),
      batch: int("TACK_RATE_BATCH", 30, 0, 10_000_000),
    },
    // Sign-ups and stranger-triggered mail (issue 29). One person signs up once and asks for a
    // mail or two; the defaults leave room for a classroom or office behind one address (30
    // sign-ups, 50 mails an hour: Auth0's per-address number for mailed codes) and for a busy
    // launch (1,000 new users an hour per App), while a flood gets that many an hour instead of
    // dozens a second, each one an argon2 hash or a mail. 5 mails of a kind to one inbox an
    // hour is what a person who did not get one retries; a flood of resets stops there.
    strangerLimits: {
      signupsPerAddress: int("SIGNUPS_PER_ADDRESS_PER_HOUR", 30, 0, 10_000_000),
      signupsPerApp: int("SIGNUPS_PER_APP_PER_HOUR", 1000, 0, 10_000_000),
      mailPerAddress: int("MAIL_PER_ADDRESS_PER_HOUR", 50, 0, 10_000_000),
      mailPerRecipient: int("MAIL_PER_RECIPIENT_PER_HOUR", 5, 0, 10_000_000),
    },
  };
  if (problems.length) throw new ConfigError("Invalid configuration:\n  - " + problems.join("\n  - "));
  return config;
}
