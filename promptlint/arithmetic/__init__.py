"""Prefix-cache arithmetic on token ids: shared prefixes and eligible blocks, the figures of a finding, what a lost prefix costs, vLLM's block hashes. Never imports a tokenizer."""
