// Generated torch.fx stack traces (frames, the source lines echoed under them
// quoting frames, malformed frames, CR/CRLF/LF line ends, odd paths) and the
// check of the stack-trace reader and of patches_involved_in_graph on them.
#pragma once

#include "generators.hpp"

#include <yobx/patches.hpp>

#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fuzzgen {

/// A path: POSIX or Windows, absolute or relative, with `.`, `..`, `//`, `\`,
/// spaces and `"` in names; never containing `", line `.
inline std::string path(Bytes& in) {
    static const char* const roots[] = {"/", "", "C:\\", "c:/", "./", "../", "//", "/cwd/./"};
    static const char* const parts[] = {"src", "x", ".", "..", "", "my dir", "a\"b", "torch", "mod.py", "x.py"};
    static const char* const seps[] = {"/", "/", "\\", "//"};
    static const char* const files[] = {"mod.py", "x.py", "m.py", "mod.py"};
    std::string out = in.pick(roots);
    const std::size_t n = in.below(4);
    for (std::size_t i = 0; i < n; ++i) out += std::string(in.pick(parts)) + in.pick(seps);
    return out + in.pick(files);
}

struct ExpectedFrame {
    std::string file;
    int line;
    std::string text;
};

struct Trace {
    std::string text;
    std::vector<ExpectedFrame> frames;
};

/// A trace and the frames the reader must find in it.
inline Trace trace(Bytes& in) {
    static const char* const indents[] = {"", "  ", "    ", "\t", " \t"};
    static const char* const ends[] = {"\n", "\n", "\r\n", "\r"};
    static const char* const bad_numbers[] = {"15x", "15.5", " 15", "", "-3", "1e3", "99999999999"};
    static const char* const functions[] = {", in forward", ", in <lambda>", "", ", in f, g"};
    Trace t;
    const std::size_t n = in.below(8);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string p = path(in);
        const int line = static_cast<int>(in.below(300));
        const std::string frame = "File \"" + p + "\", line " + std::to_string(line) + in.pick(functions);
        switch (in.below(5)) {
            case 0:
            case 1:  // a frame
                t.text += in.pick(indents) + frame;
                t.frames.push_back({p, line, frame});
                break;
            case 2:  // the source line echoed under a frame, quoting one
                t.text += std::string("    s = '") + frame + "'";
                break;
            case 3:  // a malformed frame
                t.text += in.pick(indents) + ("File \"" + p + "\", line " + in.pick(bad_numbers) + in.pick(functions));
                break;
            default:  // a message
                t.text += "Traceback (most recent call last):";
        }
        if (i + 1 < n || in.coin()) t.text += in.pick(ends);
    }
    return t;
}

/// same_file computed another way: path components after lexically_normal,
/// absolute paths equal, a relative path a component suffix of the other.
inline bool same_file_model(const std::string& a, const std::string& b) {
    const auto components = [](std::string p, bool& absolute) {
        for (auto& c : p)
            if (c == '\\') c = '/';
        std::vector<std::string> out;
        absolute = p.starts_with('/');
        if (p.size() >= 2 && p[1] == ':') {  // a drive: its own component, never removed by `..`
            out.push_back({static_cast<char>(std::tolower(static_cast<unsigned char>(p[0]))), ':'});
            absolute = true;
            p = p.substr(2);
        }
        for (const auto& part : std::filesystem::path(p).lexically_normal())
            if (!part.empty() && part != "/" && part != "") out.push_back(part.string());
        return out;
    };
    bool abs_a = false, abs_b = false;
    auto ca = components(a, abs_a), cb = components(b, abs_b);
    if (abs_a && abs_b) return ca == cb;
    for (auto* c : {&ca, &cb}) {
        std::size_t skip = 0;
        while (skip + 1 < c->size() && (*c)[skip] == "..") ++skip;
        c->erase(c->begin(), c->begin() + static_cast<std::ptrdiff_t>(skip));
    }
    if (abs_b || (!abs_a && cb.size() > ca.size())) std::swap(ca, cb);
    // cb is the tail
    if (cb.empty() || cb == std::vector<std::string>{"."} || cb.size() > ca.size()) return false;
    return std::equal(cb.rbegin(), cb.rend(), ca.rbegin());
}

inline void check_stack_trace(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const Trace t = trace(in);
    const auto frames = yobx::detail::parse_stack_trace(t.text);
    if (frames.size() != t.frames.size()) defect("frames found: " + std::to_string(frames.size()) + ", expected " +
                                                 std::to_string(t.frames.size()) + " in:\n" + t.text);
    for (std::size_t i = 0; i < frames.size(); ++i)
        if (frames[i].file != t.frames[i].file || frames[i].line != t.frames[i].line || frames[i].text != t.frames[i].text)
            defect("frame " + std::to_string(i) + " read as [" + std::string(frames[i].text) + "], expected [" +
                   t.frames[i].text + "]");
    // Paths: the reader's rule against the component model, both ways round.
    const std::string p = path(in), q = path(in);
    if (yobx::detail::same_file(p, q) != same_file_model(p, q) || yobx::detail::same_file(p, q) != yobx::detail::same_file(q, p))
        defect("same_file(\"" + p + "\", \"" + q + "\") is " + (yobx::detail::same_file(p, q) ? "true" : "false"));

    // The whole report: a patch defined in `p`, lines 100-200; a node is
    // involved exactly when one of its expected frames is in that span.
    struct Node {
        std::string name;
        std::map<std::string, std::string> meta;
    };
    struct Graph {
        std::vector<Node> nodes;
    };
    Graph g{{{"n", {{"stack_trace", t.text}}}}};
    const yobx::SourceText source{"patched", "void patched() {}", p, 100, 200};
    int target = 0;
    yobx::PatchInfo patch = yobx::PatchInfo::make(1, target, {.original = "original", .family = "fuzz", .name = "patched"});
    patch.set_patch_source(source);
    bool expected = false;
    for (const auto& f : t.frames) expected = expected || (f.line >= 100 && f.line <= 200 && same_file_model(f.file, p));
    const auto involved = yobx::PatchDetails{patch}.patches_involved_in_graph(g);
    if (involved.empty() == expected) defect("the node is " + std::string(expected ? "not " : "") + "reported for a patch in " + p + ":\n" + t.text);
    (void)yobx::PatchDetails{patch}.make_report(g, in.coin() ? "raw" : "rst");
}

}  // namespace fuzzgen
