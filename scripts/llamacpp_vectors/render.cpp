// Chat prompts from llama.cpp's own server code: oaicompat_chat_params_parse (tools/server/
// server-common.cpp), which parses an OpenAI chat-completions body and renders it with
// common_chat_templates_apply (common/chat.cpp) and llama.cpp's Jinja engine (common/jinja).
//
// usage: render TEMPLATE.jinja BOS EOS
// stdin: records "<byte length>\n<bytes>", one JSON request body per record.
// stdout: per body, one record "<byte length>\n<prompt>" or "ERR <message>" as a record; the body
// "CAPS" gives the template capabilities llama.cpp derived (common_chat_templates_get_caps) as JSON.
// Server settings are llama-server's defaults: --jinja, prefill_assistant, enable_thinking, no
// chat_template_kwargs, no media. Built and run by make_render_vectors.py, linked with
// mtmd_stubs.c: server-common.cpp also holds multimodal helpers (mtmd) that are never called here.
#include "server-common.h"

#include <cstdio>
#include <fstream>
#include <sstream>
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

static void write_record(const std::string & s) {
    std::printf("%zu\n", s.size());
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

int main(int argc, char ** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s TEMPLATE.jinja BOS EOS\n", argv[0]);
        return 2;
    }
    std::ifstream f(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    common_log_set_verbosity_thold(-1);

    server_chat_params opt;
    opt.use_jinja         = true;
    opt.prefill_assistant = true;
    opt.reasoning_format  = COMMON_REASONING_FORMAT_DEEPSEEK;
    opt.tmpls             = common_chat_templates_init(/* model= */ nullptr, ss.str(), argv[2], argv[3]);
    opt.allow_image       = false;
    opt.allow_audio       = false;
    opt.allow_video       = false;

    std::string text;
    while (read_record(text)) {
        if (text == "CAPS") {
            std::string caps = "{";
            for (const auto & [name, value] : common_chat_templates_get_caps(opt.tmpls.get())) {
                caps += (caps.size() > 1 ? ", \"" : "\"") + name + "\": " + (value ? "true" : "false");
            }
            write_record(caps + "}");
            continue;
        }
        try {
            json body = json::parse(text);
            std::vector<raw_buffer> files;
            json params = oaicompat_chat_params_parse(body, opt, files);
            write_record(params.at("prompt").get<std::string>());
        } catch (const std::exception & e) {
            write_record(std::string("ERR ") + e.what());
        }
    }
    return 0;
}
