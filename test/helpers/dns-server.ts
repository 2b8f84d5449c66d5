/**
 * A real authoritative DNS server on loopback (dns2, UDP and TCP on the same port) for tests
 * that resolve records through DNS_SERVERS. Records are set and removed while it runs;
 * names are matched case-insensitively, without a trailing dot. Unknown names answer
 * NXDOMAIN; known names without the asked type answer NOERROR with no answers. TTL 0: the
 * resolver (c-ares caches answers for their TTL) asks again at every lookup.
 */
// @ts-ignore dns2 ships its own types but they don't cover the server classes
import dns2 from "dns2";

const { Packet } = dns2 as any;

export type DnsRecord = { type: "TXT"; data: string | string[] } | { type: "MX"; exchange: string; priority: number } | { type: "A"; address: string };

export interface TestDnsServer {
  /** For DNS_SERVERS: "127.0.0.1:<port>". */
  server: string;
  port: number;
  /** Replaces every record of `name` and type with these. */
  set(name: string, records: DnsRecord[]): void;
  /** Adds one record. */
  add(name: string, record: DnsRecord): void;
  /** Removes the records of `name` (all types, or one type). */
  remove(name: string, type?: DnsRecord["type"]): void;
  clear(): void;
  /** Queries answered, by "name TYPE". */
  queries: string[];
  stop(): Promise<void>;
}

const norm = (name: string) => name.toLowerCase().replace(/\.$/, "");

export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, DnsRecord[]>();
  const queries: string[] = [];
  const handle = (request: any, send: (r: any) => void) => {
    const response = Packet.createResponseFromRequest(request);
    const [q] = request.questions ?? [];
    if (!q) return send(response);
    const name = norm(q.name);
    const typeName = Object.keys(Packet.TYPE).find((k) => Packet.TYPE[k] === q.type) ?? String(q.type);
    queries.push(`${name} ${typeName}`);
    const records = zone.get(name);
    if (!records) {
      response.header.rcode = Packet.RCODE?.NXDOMAIN ?? 3;
      response.header.aa = 1;
      return send(response);
    }
    response.header.aa = 1;
    for (const r of records) {
      if (Packet.TYPE[r.type] !== q.type) continue;
      const base = { name: q.name, type: Packet.TYPE[r.type], class: Packet.CLASS.IN, ttl: 0 };
      if (r.type === "TXT") response.answers.push({ ...base, data: r.data });
      else if (r.type === "MX") response.answers.push({ ...base, exchange: r.exchange, priority: r.priority });
      else response.answers.push({ ...base, address: r.address });
    }
    send(response);
  };
  // UDP takes a free port; TCP must get the same number, which another socket may hold:
  // then both are closed and another port is tried.
  let udp: any;
  let tcp: any;
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    udp = (dns2 as any).createServer({ udp: true, handle });
    port = (await udp.listen({ udp: { port: 0, address: "127.0.0.1" } })).udp.port;
    tcp = (dns2 as any).createServer({ tcp: true, handle });
    const bound = await new Promise<true | Error>((resolve) => {
      tcp.once("error", (e: Error) => resolve(e));
      tcp.listen({ tcp: { port, address: "127.0.0.1" } }).then(() => resolve(true), (e: Error) => resolve(e));
    });
    if (bound === true) break;
    await udp.close().catch(() => {});
    if (attempt >= 5 || !/EADDRINUSE/.test(String(bound))) throw bound;
  }
  return {
    server: `127.0.0.1:${port}`,
    port,
    queries,
    set(name, records) {
      const n = norm(name);
      const types = new Set(records.map((r) => r.type));
      const kept = (zone.get(n) ?? []).filter((r) => !types.has(r.type));
      zone.set(n, [...kept, ...records]);
    },
    add(name, record) {
      const n = norm(name);
      zone.set(n, [...(zone.get(n) ?? []), record]);
    },
    remove(name, type) {
      const n = norm(name);
      if (!type) zone.delete(n);
      else {
        const left = (zone.get(n) ?? []).filter((r) => r.type !== type);
        if (left.length) zone.set(n, left);
        else zone.delete(n);
      }
    },
    clear() {
      zone.clear();
    },
    async stop() {
      await Promise.all([udp.close(), tcp.close()]);
    },
  };
}
