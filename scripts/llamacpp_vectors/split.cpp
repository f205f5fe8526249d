// Word splits from llama.cpp's own unicode_regex_split (src/unicode.cpp + src/unicode-data.cpp).
//
// stdin: records "<byte length>\n<bytes>": first the number of regexes K, then K regexes, then
// any number of texts. stdout: one line per text, the UTF-8 byte length of each word, or
// "ERR <message>". Built and run by make_vectors.py.
#include "unicode.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static bool read_record(std::string & out) {
    size_t n = 0;
    if (std::scanf("%zu", &n) != 1) {
        return false;
    }
    std::getchar();  // the newline after the length
    out.resize(n);
    return n == 0 || std::fread(&out[0], 1, n, stdin) == n;
}

int main() {
    std::string rec;
    if (!read_record(rec)) {
        return 2;
    }
    const int k = std::stoi(rec);
    std::vector<std::string> regexes;
    for (int i = 0; i < k; ++i) {
        if (!read_record(rec)) {
            return 2;
        }
        regexes.push_back(rec);
    }
    while (read_record(rec)) {
        try {
            const auto words = unicode_regex_split(rec, regexes, /* byte_encode= */ false);
            std::string line;
            for (const auto & w : words) {
                line += std::to_string(w.size());
                line += ' ';
            }
            std::printf("%s\n", line.c_str());
        } catch (const std::exception & e) {
            std::printf("ERR %s\n", e.what());
        }
        std::fflush(stdout);
    }
    return 0;
}
