/**
 * The LLM path: an OpenAI-compatible /chat/completions endpoint (LLM_BASE_URL: OpenAI,
 * llama.cpp's server, Ollama's /v1, vLLM...). The schema goes in response_format
 * {type: "json_schema", json_schema: {name, schema, strict: true}}; a server that refuses
 * that (HTTP 400 naming response_format or json_schema) is asked again in plain JSON mode
 * ({type: "json_object"}) and remembered as such. The answer is parsed, repaired with
 * jsonrepair when malformed, and validated with ajv against the schema without its
 * "required" lists (a page may hold part of the answer); an invalid answer gets one
 * follow-up turn with the validator's errors, then is dropped with a warning.
 *
 * LLM_BASE_URL is the operator's setting, not user input, so it is called with plain fetch
 * (a local model on loopback must work); the job's abort signal cancels the call.
 */
import { jsonrepair } from "jsonrepair";
import { describeErrors, isObject, type JsonObject } from "../../schema";
import type { ValidateFunction } from "ajv";
import { dropNulls } from "./merge";

export const LLM_CALL_TIMEOUT_MS = 120_000;
const RETRIES = [300, 1_000];

export class LlmError extends Error {}

export interface Tokens {
  tokens_in: number;
  tokens_out: number;
}

type Message = { role: "system" | "user" | "assistant"; content: string };

export class LlmClient {
  /** False once the server refused response_format json_schema. */
  private schemaMode = true;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string | null,
  ) {}

  private async call(model: string, messages: Message[], schema: JsonObject, signal: AbortSignal, tokens: Tokens): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const format = this.schemaMode ? { type: "json_schema", json_schema: { name: "extraction", schema, strict: true } } : { type: "json_object" };
      const timeout = AbortSignal.timeout(LLM_CALL_TIMEOUT_MS);
      let res: Response;
      try {
        res = await fetch(`${this.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) },
          body: JSON.stringify({ model, messages, temperature: 0, response_format: format }),
          signal: AbortSignal.any([signal, timeout]),
        });
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (attempt < RETRIES.length) {
          await sleep(RETRIES[attempt], signal);
          continue;
        }
        throw new LlmError(`LLM request failed: ${(e as Error).message}`);
      }
      const text = await res.text().catch((e) => {
        if (signal.aborted) throw signal.reason;
        return "";
      });
      if (res.status === 400 && this.schemaMode && /response_format|json_schema/i.test(text)) {
        this.schemaMode = false;
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        if (attempt < RETRIES.length) {
          await sleep(RETRIES[attempt], signal);
          continue;
        }
        throw new LlmError(`LLM answered HTTP ${res.status}`);
      }
      if (!res.ok) throw new LlmError(`LLM answered HTTP ${res.status}: ${text.slice(0, 200)}`);
      let body: { choices?: { message?: { content?: string } }[]; usage?: { prompt_tokens?: number; completion_tokens?: number } };
      try {
        body = JSON.parse(text);
      } catch {
        throw new LlmError("LLM answer is not a chat completion (not JSON)");
      }
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== "string") throw new LlmError("LLM answer has no choices[0].message.content");
      const chars = messages.reduce((n, m) => n + m.content.length, 0);
      tokens.tokens_in += body.usage?.prompt_tokens ?? Math.ceil(chars / 4);
      tokens.tokens_out += body.usage?.completion_tokens ?? Math.ceil(content.length / 4);
      return content;
    }
  }

  /**
   * One chunk of one page -> a partial result (null values dropped) or null with a warning.
   * `validate` is the schema without required lists.
   */
  async extract(
    o: { model: string; schema: JsonObject; description: string; url: string; part: string; markdown: string; validate: ValidateFunction },
    signal: AbortSignal,
    tokens: Tokens,
    warnings: string[],
  ): Promise<{ value: JsonObject; repaired: boolean } | null> {
    const messages: Message[] = [
      {
        role: "system",
        content:
          "You extract structured data from web pages. Answer with one JSON object that validates against the given JSON Schema, and nothing else. " +
          "Use only facts stated in the page. Leave out (or set to null) what the page does not say.",
      },
      { role: "user", content: `Task: ${o.description}\nURL: ${o.url} (${o.part})\nJSON Schema:\n${JSON.stringify(o.schema)}\n\nPage content (markdown):\n${o.markdown}` },
    ];
    for (let turn = 0; turn < 2; turn++) {
      const content = await this.call(o.model, messages, o.schema, signal, tokens);
      const parsed = parseAnswer(content);
      if (!parsed) {
        warnings.push(`${o.url} ${o.part}: the model's answer is not JSON, even after repair`);
        return null;
      }
      const value = dropNulls(parsed.value) as JsonObject;
      if (o.validate(value)) return { value, repaired: parsed.repaired };
      const errors = describeErrors(o.validate.errors);
      if (turn === 1) {
        warnings.push(`${o.url} ${o.part}: answer dropped, it does not match the schema (${errors.join("; ")})`);
        return null;
      }
      messages.push({ role: "assistant", content }, { role: "user", content: `That JSON does not match the schema: ${errors.join("; ")}. Answer again with corrected JSON only.` });
    }
    return null;
  }
}

/** JSON object from a model answer: as is, without a code fence, or repaired by jsonrepair. */
export function parseAnswer(content: string): { value: JsonObject; repaired: boolean } | null {
  const stripped = content.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "");
  try {
    const v = JSON.parse(stripped);
    if (isObject(v)) return { value: v, repaired: false };
  } catch {
    /* repaired below */
  }
  try {
    const v = JSON.parse(jsonrepair(stripped));
    return isObject(v) ? { value: v, repaired: true } : null;
  } catch {
    return null;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
