/** MAIL_HOSTNAME and DNS_SERVERS settings, and the TXT chunk joining of the mail resolver (Bun answers one record per string). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../../src/config";
import { MAIL_SETTINGS } from "../../../src/services/mail/settings";
import { createMailResolver, joinTxtChunks, txtHas } from "../../../src/services/mail/domains/dns";
import { startDnsServer, type TestDnsServer } from "../../helpers/dns-server";

/** The mail module's settings as start-up reads them (with the kernel's). */
const mail = (env: Record<string, string>) => ({ dnsServers: loadConfig(env, { mail: MAIL_SETTINGS }).settings.mail!.dnsServers });

describe("config", () => {
  test("MAIL_HOSTNAME defaults to PUBLIC_URL's host; lower-cased, trailing dot dropped; a bad name stops start-up", () => {
    expect(loadConfig({ PUBLIC_URL: "https://Bunker.Example.com:8443/x" }).mailHostname).toBe("bunker.example.com");
    expect(loadConfig({ MAIL_HOSTNAME: "MX.Example.com." }).mailHostname).toBe("mx.example.com");
    expect(() => loadConfig({ MAIL_HOSTNAME: "not a host" })).toThrow("MAIL_HOSTNAME");
  });

  test("DNS_SERVERS: comma list of ip[:port]; unset is the system resolver", () => {
    expect(mail({}).dnsServers).toBeNull();
    expect(mail({ DNS_SERVERS: " 1.1.1.1, 127.0.0.1:5353 ,[::1]:53,::1" }).dnsServers).toEqual(["1.1.1.1", "127.0.0.1:5353", "[::1]:53", "::1"]);
    for (const bad of ["dns.example", "1.1.1.1:0", "1.1.1.1:65536", "300.1.1.1"]) expect(() => mail({ DNS_SERVERS: bad })).toThrow("DNS_SERVERS");
  });
});

describe("TXT records of several strings", () => {
  const a255 = "a".repeat(255);
  test("Bun's one-string-per-record answer is joined back at 255-byte chunks; Node's answer is kept", () => {
    expect(joinTxtChunks([[a255], ["b"], ["v=spf1 -all"]]).records).toEqual([a255 + "b", "v=spf1 -all"]);
    expect(joinTxtChunks([[a255, "b"], ["c"]]).records).toEqual([a255 + "b", "c"]);
    // A value split at another size still matches through consecutive chunks.
    const split = { records: ["v=DKIM1; p=AB", "CD"], chunks: ["v=DKIM1; p=AB", "CD"] };
    expect(txtHas(split, "v=DKIM1; p=ABCD")).toBe(true);
    expect(txtHas(split, "v=DKIM1; p=ABCDE")).toBe(false);
  });

  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(async () => {
    await dns.stop();
  });

  test("through a real DNS server: a two-string record reads as one; MX sorted by preference; absent names are empty", async () => {
    const r = createMailResolver([dns.server], { timeoutMs: 1000, tries: 1 });
    dns.set("x.example", [
      { type: "TXT", data: [a255, "tail"] },
      { type: "TXT", data: "v=spf1 a:mx.example ~all" },
      { type: "MX", exchange: "b.example", priority: 20 },
      { type: "MX", exchange: "A.example", priority: 10 },
    ]);
    expect((await r.resolveTxt("x.example")).records).toEqual([a255 + "tail", "v=spf1 a:mx.example ~all"]);
    expect(await r.resolveMx("x.example")).toEqual([
      { exchange: "a.example", priority: 10 },
      { exchange: "b.example", priority: 20 },
    ]);
    expect(await r.resolveTxt("nothing.example")).toEqual({ records: [], chunks: [] });
    expect(await r.resolveMx("nothing.example")).toEqual([]);
  });

  test("a server that does not answer is an error, not an absent record", async () => {
    const r = createMailResolver(["127.0.0.1:9"], { timeoutMs: 200, tries: 1 });
    await expect(r.resolveTxt("x.example")).rejects.toBeDefined();
  });
});
