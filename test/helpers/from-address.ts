/**
 * HTTP requests from a chosen loopback source address (127.0.0.2, 127.0.0.3, ...: all of
 * 127/8 is loopback on Linux), so tests can show per-client-address limits over a real
 * socket, where the server learns the address from requestIP as in production.
 */
import http from "node:http";

export interface AddressedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export function postFrom(localAddress: string, url: string, body: unknown): Promise<AddressedResponse> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", localAddress, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}
