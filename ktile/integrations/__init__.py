"""ktile's ops inside inference engines: vLLM (a `vllm.general_plugins` plugin), SGLang (its
plugin hooks) and transformers (`patch(model)` / `unpatch(model)`). What they share — switches,
counters, the engine contract, the CUDA-graph contract, shadow mode — is `_core`
(docs/integrations.md)."""
