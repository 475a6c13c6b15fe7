// yobx-onnx-shapes: infers the shape of every value of an ONNX model and writes it in.
//
//   yobx-onnx-shapes IN.onnx OUT.onnx [--report FILE] [--strict] [--hint NAME=VALUE]... [--op-profiles FILE]
//                    [--memory] [--at NAME=VALUE]... [--min NAME=VALUE]... [--plot NAME=LO:HI FILE.svg]
//
// Prints a one-line summary; --report writes the JSON report. --memory adds what the model
// needs in memory (yobx/adapters/onnx/model_memory.hpp) to both, at the sizes of --at, exact over
// the sizes the model runs at (input dims from 1, or from --min NAME=VALUE); --plot
// draws the peak activations and weights as functions of one dim (--memory implied). A model that cannot be
// read or inferred is one line on stderr, exit status 1, and no OUT.onnx; a mistake
// on the command line is that line followed by the usage.
#include <yobx/onnx.hpp>

#include <charconv>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <optional>
#include <utility>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

namespace {

constexpr const char* usage =
    "usage: yobx-onnx-shapes IN.onnx OUT.onnx [--report FILE] [--strict] [--hint NAME=VALUE]... [--op-profiles FILE]\n"
    "                        [--memory] [--at NAME=VALUE]... [--min NAME=VALUE]... [--plot NAME=LO:HI FILE.svg]\n"
    "       yobx-onnx-shapes --list-operators";

/// A mistake on the command line: the message is followed by the usage.
struct usage_error : yobx::value_error {
    using yobx::value_error::value_error;
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw yobx::value_error("cannot open '" + path + "'");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The integer [first, last) holds, read whole; nullopt for anything else. A number past int64
/// is a value_error naming `option` and `arg` (from_chars reads it whole and leaves v as it was).
std::optional<std::int64_t> read_size(std::string_view option, const std::string& arg, const char* first, const char* last) {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range && ptr == last)
        throw yobx::value_error(std::string(option) + " '" + arg + "': " + std::string(first, last) + " is past int64 (at most " +
                                std::to_string(std::numeric_limits<std::int64_t>::max()) + ")");
    if (ec != std::errc() || ptr != last || first == last) return std::nullopt;
    return v;
}

/// `NAME=VALUE` with VALUE a size, for `option`.
std::pair<std::string, std::int64_t> size_arg(std::string_view option, const std::string& h) {
    const auto eq = h.find('=');
    const auto v = eq == std::string::npos || eq == 0 ? std::nullopt : read_size(option, h, h.data() + eq + 1, h.data() + h.size());
    if (!v || *v < 0) throw usage_error(std::string(option) + " '" + h + "': expected NAME=VALUE with VALUE a size (an integer >= 0)");
    return {h.substr(0, eq), *v};
}

/// `NAME=VALUE` of `option` into `sizes`; a name given twice is an error naming it.
void add_size(std::string_view option, const std::string& h, yobx::SymbolValues& sizes) {
    const auto [name, v] = size_arg(option, h);
    if (!sizes.emplace(name, v).second)
        throw yobx::value_error(std::string(option) + " '" + h + "': " + name + " is given twice (first as " + std::to_string(sizes.at(name)) + ")");
}

struct Plot {
    std::string dim, path;
    std::int64_t lo = 0, hi = 0;
};

/// `NAME=LO:HI` of --plot.
Plot plot_arg(const std::string& range, std::string path) {
    const auto eq = range.find('='), colon = range.find(':', eq == std::string::npos ? 0 : eq);
    Plot p{range.substr(0, eq), std::move(path), 0, 0};
    const char* end = range.data() + range.size();
    std::optional<std::int64_t> lo, hi;
    if (eq != std::string::npos && eq != 0 && colon != std::string::npos) {
        lo = read_size("--plot", range, range.data() + eq + 1, range.data() + colon);
        hi = read_size("--plot", range, range.data() + colon + 1, end);
    }
    if (!lo || !hi || *lo < 0 || *hi < *lo) throw usage_error("--plot '" + range + "': expected NAME=LO:HI with sizes 0 <= LO <= HI");
    p.lo = *lo;
    p.hi = *hi;
    return p;
}

int run(int argc, char** argv) {
    std::string in, out, report_path;
    yobx::onnx::InferenceOptions options;
    bool memory = false;
    yobx::SymbolValues at, minimum;
    std::optional<Plot> plot;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw usage_error(std::string(a) + " needs a value");
            return argv[++i];
        };
        if (a == "--report") report_path = value();
        else if (a == "--strict") options.strict = true;
        else if (a == "--op-profiles") options.op_profiles = yobx::onnx::OpProfiles::from_json(read_text(value()));
        else if (a == "--hint") {
            add_size(a, value(), options.hints);
        } else if (a == "--memory") {
            memory = true;
        } else if (a == "--at") {
            add_size(a, value(), at);
            memory = true;
        } else if (a == "--min") {
            add_size(a, value(), minimum);
            memory = true;
        } else if (a == "--plot") {
            const std::string range = value();
            plot = plot_arg(range, value());
            memory = true;
        } else if (a == "--list-operators") {
            std::cout << yobx::onnx::operator_table();
            return 0;
        } else if (a == "--help" || a == "-h") {
            std::cout << usage << "\n";
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            throw usage_error("unknown option '" + std::string(a) + "'");
        } else if (in.empty()) in = a;
        else if (out.empty()) out = a;
        else throw usage_error("unexpected argument '" + std::string(a) + "'");
    }
    if (in.empty() || out.empty()) throw usage_error("IN.onnx and OUT.onnx are required");
    // the weights stay in the mapped file: read, inferred and written without being copied
    yobx::onnx::ModelFile file(in);
    options.model_dir = std::filesystem::path(in).parent_path();
    if (options.model_dir.empty()) options.model_dir = ".";
    yobx::onnx::ShapeReport report = yobx::onnx::infer_shapes(file.model(), options);
    if (memory) {
        // the sizes and the plot's dim by symbol: a dim the model names "batch size" is batch_size
        at = report.by_symbol(at);
        if (plot) plot->dim = report.symbol_of(plot->dim);
        yobx::SymbolValues asked = at;  // in the domain the peak is exact over
        if (plot) asked.insert_or_assign(plot->dim, std::min(plot->lo, at.count(plot->dim) ? at.at(plot->dim) : plot->lo));
        report.memory = yobx::onnx::memory_of(file.model(), report, minimum, asked);
        yobx::onnx::put_sizes(*report.memory, at, plot ? plot->dim : std::string());
    }
    if (plot) {
        const std::string svg = yobx::onnx::memory_svg(*report.memory, plot->dim, plot->lo, plot->hi, at);
        std::ofstream p(plot->path, std::ios::binary | std::ios::trunc);
        if (!p || !(p << svg)) throw yobx::value_error("cannot write the plot '" + plot->path + "'");
    }
    if (!report_path.empty()) {
        std::ofstream r(report_path, std::ios::binary | std::ios::trunc);
        if (!r || !(r << report.to_json())) throw yobx::value_error("cannot write the report '" + report_path + "'");
    }
    file.save(out);
    std::cout << "yobx-onnx-shapes: " << report.summary() << "\n";
    if (report.memory) std::cout << report.memory->summary() << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const usage_error& e) {
        std::cerr << "yobx-onnx-shapes: " << yobx::one_line(e.what()) << "\n" << usage << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "yobx-onnx-shapes: " << yobx::one_line(e.what()) << "\n";
        return 1;
    }
}
