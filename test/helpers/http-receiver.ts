/**
 * A real HTTP server on 127.0.0.1 (port 0) that records every request: the target of
 * webhook and outbound-HTTP tests. The handler can be swapped mid-test (e.g. fail, then 200).
 */
export interface ReceivedRequest {
  method: string;
  /** Path plus query string, e.g. "/hook?x=1". */
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
}

export type ReceiverHandler = (req: Request) => Response | Promise<Response>;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  setHandler(fn: ReceiverHandler): void;
  /** Resolves once `count` requests have arrived (real time: network I/O, not domain time). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  stop(): Promise<void>;
}

export function startReceiver(handler?: ReceiverHandler): Receiver {
  let current: ReceiverHandler = handler ?? (() => new Response("ok"));
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      // Read the body before the handler sees the request, so the record is complete
      // even when the handler answers without reading it.
      const body = await req.clone().text();
      requests.push({ method: req.method, path: url.pathname + url.search, headers, body });
      for (const w of waiters) w();
      return current(req);
    },
  });
  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setHandler(fn) {
      current = fn;
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: ${requests.length}/${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(requests);
        };
        waiters.add(check);
      });
    },
    async stop() {
      await server.stop(true);
    },
  };
}
