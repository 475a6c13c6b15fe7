// yobx/patches/details.hpp — PatchDetails: the ordered patches of one export,
// and which of them produced the nodes of a traced graph.
//
// A graph is anything with an iterable `nodes` whose elements carry a `meta`
// map; the `"stack_trace"` entry of a node holds the frames that created it,
// one per line as `File "path", line N, in fn` (torch.fx's layout). A patch is
// involved in a node when a frame falls in the file and lines of the patch's
// YOBX_PATCH_SOURCE definition.
#pragma once

#include <yobx/error.hpp>
#include <yobx/patches/patch_info.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// A node whose `meta` map may hold a `"stack_trace"` string.
template <class Node>
concept TracedNode = requires(const Node& node) {
    { node.meta.find("stack_trace") != node.meta.end() } -> std::convertible_to<bool>;
    { std::string_view(node.meta.find("stack_trace")->second) };
};

/// What patches_involved_in_graph accepts: `graph.nodes` iterates over TracedNodes.
///   struct Node { std::string name; std::map<std::string, std::string> meta; };
///   struct Graph { std::vector<Node> nodes; };
template <class G>
concept TracedGraph = requires(const G& g) {
    requires std::ranges::input_range<decltype((g.nodes))>;
    requires TracedNode<std::ranges::range_value_t<decltype((g.nodes))>>;
};

/// A patch and the nodes of a graph created inside its definition, each with
/// the stack frame that points into the patch. The node pointers point into
/// the graph given to patches_involved_in_graph.
template <class Node>
struct InvolvedPatch {
    struct Hit {
        const Node* node;
        std::size_t index;  // the node's position in `graph.nodes`
        std::string frame;  // `File "path", line N, in fn`
    };
    PatchInfo patch;
    std::vector<Hit> nodes;
};

namespace detail {

/// One frame of a stack trace: `File "path", line N, in fn`.
struct StackFrame {
    std::string_view file;
    int line = 0;
    std::string_view text;  // the whole frame, without indentation or line break
};

/// The frames of a torch.fx stack trace. A frame is a line that starts, after
/// spaces and tabs, with `File "`; the path runs to the first `", line `
/// followed by digits that end at `,` or at the end of the line (so a path may
/// hold `"`). Any other line (the source line echoed under each frame, a
/// message) is not a frame, whatever it quotes. Lines end at LF, CRLF or CR.
inline std::vector<StackFrame> parse_stack_trace(std::string_view trace) {
    std::vector<StackFrame> frames;
    std::size_t start = 0;
    while (start < trace.size()) {
        std::size_t stop = trace.find_first_of("\r\n", start);
        if (stop == std::string_view::npos) stop = trace.size();
        std::string_view line = trace.substr(start, stop - start);
        start = stop + (trace.substr(stop).starts_with("\r\n") ? 2 : 1);
        line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
        constexpr std::string_view open = "File \"", sep = "\", line ";
        if (!line.starts_with(open)) continue;
        for (auto q = line.find(sep, open.size()); q != std::string_view::npos; q = line.find(sep, q + 1)) {
            const std::string_view rest = line.substr(q + sep.size());
            const std::size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
            if (digits == 0 || (digits < rest.size() && rest[digits] != ',')) continue;
            int number = 0;
            const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + digits, number);
            if (ec != std::errc{}) continue;  // more digits than an int holds
            frames.push_back({line.substr(open.size(), q - open.size()), number, line});
            break;
        }
    }
    return frames;
}

/// A path normalised lexically, with no filesystem access: `\` read as `/`;
/// a Windows path (one with a drive letter or a `\`) lower-cased, as Windows
/// compares names case-insensitively (`C:\Users\Me\src\mod.py` is
/// `c:/users/me/src/mod.py`); then
/// std::filesystem's lexically_normal (empty and `.` components dropped,
/// `dir/..` removed, `..` above the root dropped, leading `..` of a relative
/// path kept), without a trailing `/`.
inline std::string normalize_path(std::string_view path) {
    std::string p(path);
    const bool has_drive = p.size() >= 2 && p[1] == ':' && std::isalpha(static_cast<unsigned char>(p[0]));
    if (has_drive || p.find('\\') != std::string::npos)
        for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::replace(p.begin(), p.end(), '\\', '/');
    std::string drive;  // `c:`, a root that `..` does not remove
    if (has_drive) {
        drive = p.substr(0, 2);
        p.erase(0, 2);
    }
    std::string out = std::filesystem::path(p).lexically_normal().generic_string();
    if (out.size() > 1 && out.ends_with('/')) out.pop_back();
    if (!drive.empty() && out == ".") out.clear();
    return drive + out;
}

/// Whether two spellings of a path name the same file (same_normalized_file:
/// two already normalised by normalize_path). Two absolute paths are equal;
/// when one is a Windows path (a drive letter) the other's case does not matter.
/// Otherwise the leading `..` of relative paths are left out, and the relative
/// path (the shorter of two) must end the other at a `/`: a trace may hold a
/// relative path where __FILE__ is absolute, or the other way round.
inline bool same_normalized_file(std::string_view x, std::string_view y) {
    const auto has_drive = [](std::string_view p) { return p.size() >= 2 && p[1] == ':'; };
    const auto is_absolute = [&](std::string_view p) { return p.starts_with('/') || has_drive(p); };
    if (has_drive(x) != has_drive(y) && (has_drive(x) || has_drive(y))) {
        // a POSIX spelling of a relative path against a Windows one: compare lower-cased
        std::string a(x), b(y);
        for (std::string* s : {&a, &b})
            for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (a != x || b != y) return same_normalized_file(a, b);
    }
    if (is_absolute(x) && is_absolute(y)) return x == y;
    // leading `..` of a relative path name directories the other path may spell out
    for (std::string_view* p : {&x, &y})
        while (p->starts_with("../")) p->remove_prefix(3);
    // the tail: the relative one, or the shorter of two relative ones
    if (is_absolute(y) || (!is_absolute(x) && x.size() < y.size())) std::swap(x, y);
    if (y.empty() || y == "." || y == ".." || !x.ends_with(y)) return false;
    return x.size() == y.size() || x[x.size() - y.size() - 1] == '/';
}
inline bool same_file(std::string_view a, std::string_view b) { return same_normalized_file(normalize_path(a), normalize_path(b)); }

/// A node's name for the report: its `name` member when it has one.
template <class Node>
std::string node_label(const Node& node, std::size_t index) {
    if constexpr (requires { std::string(node.name); }) return std::string(node.name);
    else return "node " + std::to_string(index);
}

}  // namespace detail

/// An ordered collection of patches: what a PatchGuard applied, what a report
/// is about. Iteration, `size`, indexing and `find` behave like a list.
class PatchDetails {
public:
    PatchDetails() = default;
    PatchDetails(std::initializer_list<PatchInfo> patches) {
        for (const auto& p : patches) append(p);
    }

    /// Adds a patch at the end. Two patches with the same `refid` cannot be in
    /// one collection (their reports would share a label).
    void append(PatchInfo patch) {
        for (const auto& p : patches_)
            if (p.refid() == patch.refid())
                throw value_error("PatchDetails::append: a patch with refid '" + patch.refid() + "' is already in the collection");
        patches_.push_back(std::move(patch));
    }
    /// Appends every patch of `other`, in order.
    void extend(const PatchDetails& other) {
        for (const auto& p : other) append(p);
    }

    std::size_t size() const noexcept { return patches_.size(); }
    bool empty() const noexcept { return patches_.empty(); }
    std::vector<PatchInfo>::const_iterator begin() const noexcept { return patches_.begin(); }
    std::vector<PatchInfo>::const_iterator end() const noexcept { return patches_.end(); }
    /// The patch at `i`; out of range is an error that says the size.
    const PatchInfo& operator[](std::size_t i) const {
        if (i >= patches_.size())
            throw value_error("PatchDetails: index " + std::to_string(i) + " is out of range (" +
                              std::to_string(patches_.size()) + " patches)");
        return patches_[i];
    }

    /// The first patch named `name` (the patch's name, not the original's), or nullopt.
    std::optional<PatchInfo> find(std::string_view name) const {
        for (const auto& p : patches_)
            if (p.name() == name) return p;
        return std::nullopt;
    }

    /// Each patch, in collection order, with the nodes of `graph` that a frame
    /// of their stack trace places inside the patch's definition. Patches
    /// without a captured source, or without nodes, are left out.
    template <TracedGraph G>
    auto patches_involved_in_graph(const G& graph) const {
        using Node = std::ranges::range_value_t<decltype((graph.nodes))>;
        std::vector<InvolvedPatch<Node>> entries;
        std::vector<std::string> patch_files;  // normalised once, like each frame's path
        for (const auto& patch : patches_)
            if (patch.patch_source()) {
                entries.push_back({patch, {}});
                patch_files.push_back(detail::normalize_path(patch.patch_source()->file));
            }
        std::size_t index = 0;
        std::vector<std::string> frame_files;
        for (const auto& node : graph.nodes) {
            const auto it = node.meta.find("stack_trace");
            if (it != node.meta.end()) {
                const auto frames = detail::parse_stack_trace(std::string_view(it->second));
                frame_files.clear();
                for (const auto& frame : frames) frame_files.push_back(detail::normalize_path(frame.file));
                for (std::size_t e = 0; e < entries.size(); ++e) {
                    const SourceText& source = *entries[e].patch.patch_source();
                    for (std::size_t f = 0; f < frames.size(); ++f) {
                        if (frames[f].line >= source.first_line && frames[f].line <= source.last_line &&
                            detail::same_normalized_file(frame_files[f], patch_files[e])) {
                            entries[e].nodes.push_back({&node, index, std::string(frames[f].text)});
                            break;
                        }
                    }
                }
            }
            ++index;
        }
        std::erase_if(entries, [](const auto& e) { return e.nodes.empty(); });
        return entries;
    }

    /// A report on the patches involved in `graph`: for each, its title, its
    /// diff and the nodes it created, as text (DiffFormat::raw) or RST (DiffFormat::rst).
    template <TracedGraph G>
    std::string make_report(const G& graph, DiffFormat format = DiffFormat::raw) const {
        const auto involved = patches_involved_in_graph(graph);
        if (involved.empty()) return "No patch is involved in the graph.\n";
        std::string out = std::to_string(involved.size()) + " patch(es) involved in the graph.\n";
        for (const auto& e : involved) {
            out += "\n";
            if (format == DiffFormat::raw) {
                out += e.patch.format_diff(DiffFormat::raw);
                out += "nodes created inside " + e.patch.name() + " (" + std::to_string(e.nodes.size()) + "):\n";
                for (const auto& hit : e.nodes) out += "  " + detail::node_label(*hit.node, hit.index) + ": " + hit.frame + "\n";
            } else {
                out += e.patch.format_diff(DiffFormat::rst);
                out += "\nNodes created inside ``" + e.patch.name() + "`` (" + std::to_string(e.nodes.size()) + "):\n\n";
                for (const auto& hit : e.nodes) out += "- ``" + detail::node_label(*hit.node, hit.index) + "``: ``" + hit.frame + "``\n";
            }
        }
        return out;
    }
    /// The same with the format's name, "raw" or "rst".
    template <TracedGraph G>
    std::string make_report(const G& graph, std::string_view format) const {
        return make_report(graph, diff_format(format, "PatchDetails::make_report"));
    }

private:
    std::vector<PatchInfo> patches_;
};

}  // namespace yobx
