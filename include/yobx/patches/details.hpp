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
#include <charconv>
#include <concepts>
#include <cstddef>
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
    std::string_view text;  // the whole frame, trimmed
};

inline std::vector<StackFrame> parse_stack_trace(std::string_view trace) {
    std::vector<StackFrame> frames;
    for (auto line : split_lines(trace)) {
        const auto f = line.find("File \"");
        if (f == std::string_view::npos) continue;
        const auto path_begin = f + 6;
        const auto path_end = line.find('"', path_begin);
        if (path_end == std::string_view::npos) continue;
        const auto l = line.find(", line ", path_end);
        if (l != path_end + 1) continue;
        const char* first = line.data() + l + 7;
        int number = 0;
        const auto [ptr, ec] = std::from_chars(first, line.data() + line.size(), number);
        if (ec != std::errc{} || ptr == first) continue;
        frames.push_back({line.substr(path_begin, path_end - path_begin), number, line.substr(f)});
    }
    return frames;
}

/// Whether two spellings of a path name the same file: equal, or one is the
/// other with leading directories (a trace may hold a relative path where
/// __FILE__ is absolute).
inline bool same_file(std::string_view a, std::string_view b) {
    if (a.size() < b.size()) std::swap(a, b);
    if (b.empty() || !a.ends_with(b)) return false;
    return a.size() == b.size() || a[a.size() - b.size() - 1] == '/';
}

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
        for (const auto& patch : patches_)
            if (patch.patch_source()) entries.push_back({patch, {}});
        std::size_t index = 0;
        for (const auto& node : graph.nodes) {
            const auto it = node.meta.find("stack_trace");
            if (it != node.meta.end()) {
                const auto frames = detail::parse_stack_trace(std::string_view(it->second));
                for (auto& entry : entries) {
                    const SourceText& source = *entry.patch.patch_source();
                    for (const auto& frame : frames) {
                        if (detail::same_file(frame.file, source.file) && frame.line >= source.first_line &&
                            frame.line <= source.last_line) {
                            entry.nodes.push_back({&node, index, std::string(frame.text)});
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
    /// diff and the nodes it created, as text (`"raw"`) or RST (`"rst"`).
    template <TracedGraph G>
    std::string make_report(const G& graph, std::string_view format = "raw") const {
        if (format != "raw" && format != "rst")
            throw value_error("PatchDetails::make_report: unknown format '" + std::string(format) +
                              "', expected 'raw' or 'rst'");
        const auto involved = patches_involved_in_graph(graph);
        if (involved.empty()) return "No patch is involved in the graph.\n";
        std::string out = std::to_string(involved.size()) + " patch(es) involved in the graph.\n";
        for (const auto& e : involved) {
            out += "\n";
            if (format == "raw") {
                out += e.patch.format_diff("raw");
                out += "nodes created inside " + e.patch.name() + " (" + std::to_string(e.nodes.size()) + "):\n";
                for (const auto& hit : e.nodes) out += "  " + detail::node_label(*hit.node, hit.index) + ": " + hit.frame + "\n";
            } else {
                out += e.patch.format_diff("rst");
                out += "\nNodes created inside ``" + e.patch.name() + "`` (" + std::to_string(e.nodes.size()) + "):\n\n";
                for (const auto& hit : e.nodes) out += "- ``" + detail::node_label(*hit.node, hit.index) + "``: ``" + hit.frame + "``\n";
            }
        }
        return out;
    }

private:
    std::vector<PatchInfo> patches_;
};

}  // namespace yobx
