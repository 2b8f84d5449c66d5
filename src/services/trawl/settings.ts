/** The extraction jobs' settings: the LLM endpoint, its models and the worker's concurrency (docs/operations.md "Configuration"). */
import { custom, int, optional, text, url } from "../../settings";

export const TRAWL_SETTINGS = {
  llmBaseUrl: url("LLM_BASE_URL", ["http:", "https:"], "OpenAI-compatible endpoint (.../v1); null: the offline heuristic extractor"),
  llmApiKey: optional("LLM_API_KEY", "The endpoint's key"),
  llmModel: text("LLM_MODEL", "gpt-4o-mini", "Model of model_tier standard"),
  llmModelPro: custom(["LLM_MODEL_PRO"], "LLM_MODEL (else gpt-4o)", "Model of model_tier pro", (r) => r.get("LLM_MODEL_PRO") ?? r.get("LLM_MODEL") ?? "gpt-4o"),
  concurrency: int("TRAWL_CONCURRENCY", 2, 1, 64, "Extraction jobs running at once per node"),
};
