"""Text to token ids: the pinned tokenizer (resolve, verify, load, encode), its vetting, window encoding, and tokenizing as the serving engine does."""
