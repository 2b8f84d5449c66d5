/**
 * Who is calling: the address per-client limits, audit entries and the cap on requests in
 * progress count against. The socket's peer, unless that peer is a reverse proxy named in
 * TRUSTED_PROXIES: then X-Forwarded-For is read from the right, skipping trusted hops, and
 * the first address not trusted is the client (nginx's real_ip_recursive). The left part of
 * the header is whatever the client sent and is never believed.
 */
import { BlockList, isIP } from "node:net";

export interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

export class ClientAddresses {
  private readonly trusted: BlockList | null;

  /** `proxies`: IPs or CIDR ranges (validated by config.ts). */
  constructor(proxies: readonly string[] = []) {
    this.trusted = proxies.length ? new BlockList() : null;
    for (const p of proxies) {
      const [ip, bits] = p.split("/");
      const family = isIP(ip) === 4 ? "ipv4" : "ipv6";
      if (bits === undefined) this.trusted!.addAddress(ip, family);
      else this.trusted!.addSubnet(ip, Number(bits), family);
    }
  }

  /** The client's address; null when the request did not come over a socket (in-process). */
  of(request: Request, server: AddressSource | null | undefined): string | null {
    const peer = server?.requestIP(request)?.address ?? null;
    if (peer === null || this.trusted === null || !this.isTrusted(peer)) return peer;
    const header = request.headers.get("x-forwarded-for");
    if (!header) return peer;
    const hops = header.split(",");
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i].trim();
      if (isIP(hop) === 0) break; // not written by a proxy we trust: stop at the last good hop
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    const v4 = address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : null;
    if (v4 !== null) return this.trusted!.check(v4, "ipv4");
    return this.trusted!.check(address, isIP(address) === 4 ? "ipv4" : "ipv6");
  }
}
