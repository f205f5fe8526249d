// Token ids from llama.cpp's own tokenizer: llama_tokenize on a vocab-only GGUF.
//
// usage: tokenize MODEL.gguf ADD_SPECIAL(0|1) PARSE_SPECIAL(0|1)
// stdin: records "<byte length>\n<bytes>", one per text; stdout: one line of ids per text.
// Built and run by make_vectors.py.
#include "llama.h"

#include <cstdio>
#include <string>
#include <vector>

static bool read_record(std::string & out) {
    size_t n = 0;
    if (std::scanf("%zu", &n) != 1) {
        return false;
    }
    std::getchar();
    out.resize(n);
    return n == 0 || std::fread(&out[0], 1, n, stdin) == n;
}

static void quiet(enum ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s MODEL.gguf ADD_SPECIAL PARSE_SPECIAL\n", argv[0]);
        return 2;
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    auto mparams = llama_model_default_params();
    mparams.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], mparams);
    if (!model) {
        std::fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const bool add_special = argv[2][0] == '1';
    const bool parse_special = argv[3][0] == '1';
    std::string text;
    std::vector<llama_token> ids;
    while (read_record(text)) {
        int n = -llama_tokenize(vocab, text.data(), (int) text.size(), nullptr, 0, add_special, parse_special);
        ids.resize(n < 0 ? 0 : n);
        n = llama_tokenize(vocab, text.data(), (int) text.size(), ids.data(), (int) ids.size(), add_special, parse_special);
        std::string line;
        for (int i = 0; i < n; ++i) {
            line += std::to_string(ids[i]);
            line += ' ';
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
