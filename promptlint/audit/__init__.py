"""`promptlint audit`: attribute every prefix-cache miss of a request trace to a class.

One module per job, streamed in this order (see docs/audit.md):

    ingest      lines of a trace (native JSONL, OpenAI-compatible logs, LiteLLM, OTel,
                hash_ids traces) -> AuditRequest records; prompts and salts dropped here;
                every row counted as used, skipped or failed
    fields      typed readers for row fields: a wrong type fails its row, naming the field
    fingerprints keyed, chained chunk fingerprints; canonical template-input digests
    index       bounded, generational prefix index sharded by model revision / tenant /
                instance: the longest shared prefix against earlier requests
    classify    per-request ceilings and the waterfall of losses (M3 .. U) and the class
    capacity    Mattson stack distances (hit tokens versus KV capacity) and an LRU check
    kvevents    decoded vLLM KV events -> proof of eviction (M5)
    prom        Prometheus text-format scrapes; reconcile: counter deltas and validity
    summary     token-weighted sums and breakdowns
    report      full / json / csv output and the worksheet; plot: SVG
    pipeline    wires the above together for the command
"""
