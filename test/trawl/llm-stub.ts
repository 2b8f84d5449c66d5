/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 for the extraction tests: the
 * test sets what it answers (content, status, delay). It records every request body and
 * which requests were aborted by the client.
 */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  [k: string]: unknown;
}

export type StubAnswer = { content: string } | { status: number; body: string } | { hang: true };

export interface LlmStub {
  url: string;
  requests: { body: ChatRequest; headers: Record<string, string> }[];
  aborted: number;
  answer: (req: ChatRequest, n: number) => StubAnswer | Promise<StubAnswer>;
  stop(): Promise<void>;
}

export const completion = (content: string, usage = { prompt_tokens: 100, completion_tokens: 20 }) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: "stub", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage });

export function startLlmStub(): LlmStub {
  const stub: LlmStub = {
    url: "",
    requests: [],
    aborted: 0,
    answer: () => ({ content: "{}" }),
    stop: async () => {
      await server.stop(true);
    },
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/chat/completions" || req.method !== "POST") return new Response("not found", { status: 404 });
      const body = (await req.json()) as ChatRequest;
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      stub.requests.push({ body, headers });
      const a = await stub.answer(body, stub.requests.length);
      if ("hang" in a) {
        return new Promise<Response>((resolve) => {
          req.signal.addEventListener("abort", () => {
            stub.aborted++;
            resolve(new Response("aborted", { status: 499 }));
          });
        });
      }
      if ("status" in a) return new Response(a.body, { status: a.status, headers: { "content-type": "application/json" } });
      return new Response(completion(a.content), { headers: { "content-type": "application/json" } });
    },
  });
  stub.url = `http://127.0.0.1:${server.port}/v1`;
  return stub;
}
