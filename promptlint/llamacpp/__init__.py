"""llama.cpp's own text handling at the pinned commit (see ``tables.LLAMACPP_COMMIT``).

``tables``: the Unicode and pre-tokenizer tables generated from llama.cpp's source
(scripts/gen_llamacpp_tables.py); ``split``: a port of ``unicode_regex_split`` (the
hand-written splitters and the std::regex fallback); ``pretype``: which pre-tokenizer a
GGUF converted from a given tokenizer gets. Standard library only.
"""
