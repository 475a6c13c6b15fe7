// The Python module's C++ side, yobx._yobx: a few functions over bytes and strings.
//
// Models cross as serialized bytes, expressions as text, reports as JSON: no protobuf
// or yobx object crosses the boundary, so the module works whatever protobuf Python's
// onnx uses. The Pythonic API (docstrings, keyword arguments, ModelProto in and out)
// is in yobx/onnx/__init__.py and yobx/sym.py; inference is written once, in the
// headers (yobx/adapters/onnx/serialized.hpp). What crosses is decided in one place,
// yobx/onnx/__init__.py ("What crosses into C++"); the thread a large model's inference
// runs on beside Python's copy of it is inference_call.hpp's.
#include <yobx/onnx.hpp>
#include <yobx/detail/utf8.hpp>
#include <yobx/onnx/payload.hpp>
#include <yobx/sym.hpp>

#include "inference_call.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

using yobx_python::Call;
using yobx_python::Inference;
using yobx_python::view_of;

using Sizes = std::map<std::string, std::int64_t, std::less<>>;
using Ranges = std::map<std::string, std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>>;


yobx::onnx::InferenceOptions options_of(bool strict, const Sizes& hints, const std::string& op_profiles, bool onnx_fallback,
                                        bool guess_output_rank, bool auto_merge, const std::string& model_dir) {
    yobx::onnx::InferenceOptions o;
    o.strict = strict;
    o.hints = yobx::onnx::InferenceOptions::Hints(hints.begin(), hints.end());
    if (!op_profiles.empty()) o.op_profiles = yobx::onnx::OpProfiles::from_json(op_profiles);
    o.onnx_fallback = onnx_fallback;
    o.guess_output_rank = guess_output_rank;
    o.auto_merge = auto_merge;
    o.model_dir = model_dir;
    return o;
}

/// A ShapeEnv whose symbols (those of `exprs`) have the given ranges, sizes ([0, oo]) otherwise.
yobx::ShapeEnv env_of(const std::vector<yobx::SymInt>& exprs, const Ranges& ranges) {
    yobx::ShapeEnv env;
    for (const auto& [name, r] : ranges) {
        const yobx::ValueRange range{r.first.value_or(yobx::ValueRange::neg_inf), r.second.value_or(yobx::ValueRange::inf)};
        if (range.empty())
            throw yobx::value_error("the range of '" + name + "' is empty: [" + std::to_string(range.lower) + ", " +
                                    std::to_string(range.upper) + "]");
        env.create_symbol(name, std::nullopt, range);
    }
    for (const auto& e : exprs)
        for (const auto& s : e.free_symbols())
            if (!env.has_symbol(s)) env.create_symbol(s, std::nullopt, yobx::ValueRange::size());
    return env;
}

yobx::SymInt binary(std::string_view op, const yobx::SymInt& a, const yobx::SymInt& b) {
    if (op == "+") return a + b;
    if (op == "-") return a - b;
    if (op == "*") return a * b;
    if (op == "//") return floordiv(a, b);
    if (op == "%") return mod(a, b);
    if (op == "max") return yobx::sym_max({a, b});
    if (op == "min") return yobx::sym_min({a, b});
    throw yobx::value_error("unknown operation '" + std::string(op) + "'");
}

yobx::SymBool relation(std::string_view op, const yobx::SymInt& a, const yobx::SymInt& b) {
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    throw yobx::value_error("unknown relation '" + std::string(op) + "'");
}

/// Raises `type` with the message `what` as the command prints it (one line: yobx::one_line). A
/// message names the model's values and nodes, whose names may hold any bytes (proto2 strings):
/// a byte that is not UTF-8 reads as U+FFFD, where PyErr_SetString would raise a
/// UnicodeDecodeError instead of the error.
void set_error(PyObject* type, std::string_view what) {
    const std::string line = yobx::one_line(what);
    PyObject* message = PyUnicode_DecodeUTF8(line.data(), static_cast<Py_ssize_t>(line.size()), "replace");
    if (message == nullptr) return;  // out of memory: that error is set
    PyErr_SetObject(type, message);
    Py_DECREF(message);
}

/// Raises the OSError of the errno for a file yobx cannot open, read or write (FileNotFoundError,
/// PermissionError, IsADirectoryError...: the class OSError(errno, ...) makes), with `errno` set
/// and `str()` the message as the command prints it ("cannot open 'x.onnx'"; `filename` stays
/// None, as setting it would make str() "[Errno 2] ...: 'x.onnx'").
void set_os_error(const yobx::file_error& e) {
    const std::string line = yobx::one_line(e.what());
    PyObject* message = PyUnicode_DecodeUTF8(line.data(), static_cast<Py_ssize_t>(line.size()), "replace");
    if (message == nullptr) return;  // out of memory: that error is set
    PyObject* probe = PyObject_CallFunction(PyExc_OSError, "iO", e.code(), message);
    PyObject* type = probe ? reinterpret_cast<PyObject*>(Py_TYPE(probe)) : nullptr;
    PyObject* error = type ? PyObject_CallOneArg(type, message) : nullptr;
    PyObject* code = error ? PyLong_FromLong(e.code()) : nullptr;
    if (code && PyObject_SetAttrString(error, "errno", code) == 0) PyErr_SetObject(type, error);
    Py_XDECREF(code);
    Py_XDECREF(error);
    Py_XDECREF(probe);
    Py_DECREF(message);
}

/// A model's name for Python: a str, or bytes when it is not UTF-8, as protobuf's Python
/// module gives such a name (`value_info.name` is then bytes, and finds its entry).
py::object name_of(const std::string& name) {
    if (yobx::detail::utf8::valid(name)) return py::str(name);
    return py::bytes(name);
}

}  // namespace

PYBIND11_MODULE(_yobx, m) {
    m.doc() = "yobx's C++ side: ONNX shape inference and symbolic dims over bytes and text (use yobx.onnx and yobx.sym)";
    // yobx's exceptions as the Python ones they are named after (yobx/error.hpp)
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const yobx::file_error& e) {
            set_os_error(e);
        } catch (const yobx::value_error& e) {
            set_error(PyExc_ValueError, e.what());
        } catch (const yobx::type_error& e) {
            set_error(PyExc_TypeError, e.what());
        } catch (const yobx::not_implemented_error& e) {
            set_error(PyExc_NotImplementedError, e.what());
        } catch (const yobx::GuardOnDataDependentSymNode& e) {
            set_error(PyExc_ValueError, e.what());
        }
    });

    // On yobx's thread (on_worker), Python copies the model it holds meanwhile (the result's other
    // half), then takes the result.
    py::class_<Call>(m, "Call").def("result", &Call::result, "waits for the inference; infer_shapes' tuple, or its error");
    m.def(
        "infer_shapes",
        [](const py::bytes& model, const std::string& payloads, std::size_t left_from, bool with_report, bool strict, const Sizes& hints,
           const std::string& op_profiles, bool onnx_fallback, bool guess_output_rank, bool auto_merge, bool on_worker) -> py::object {
            Inference inference(model, payloads, left_from, with_report,
                                options_of(strict, hints, op_profiles, onnx_fallback, guess_output_rank, auto_merge, {}));
            if (on_worker) return py::cast(std::make_unique<Call>(std::move(inference)));
            {
                // on the caller's thread, the result at once (no Call to make and ask: 2% of a small model's call).
                // What the walk leaves is freed here, before returning: it lies in this thread's malloc arena,
                // and freeing it on yobx's thread contended with Python's copy of the model for that arena
                // (a 233-node model's call 0.6 -> 0.8 ms). On yobx's thread (Call) the walk allocates in that
                // thread's own arena, freed there after the result is out.
                py::gil_scoped_release unlocked;  // the bytes are held by `inference`
                yobx::onnx::Leftovers leftovers;
                inference.run(leftovers);
            }
            return inference.result();
        },
        py::arg("model"), py::arg("payloads"), py::arg("left_from"), py::arg("with_report"), py::arg("strict"), py::arg("hints"),
        py::arg("op_profiles"), py::arg("onnx_fallback"), py::arg("guess_output_rank"), py::arg("auto_merge"), py::arg("on_worker"),
        "(model bytes, payloads, ...) -> (shaped model bytes or its graph's types, positions of the initializers left out, "
        "whether the bytes are the graph's types only, report JSON or None); on_worker: a Call whose result() is that tuple");

    m.def(
        "infer_shapes_path",
        [](const std::string& in, const std::string& out, bool strict, const Sizes& hints, const std::string& op_profiles,
           bool onnx_fallback, bool guess_output_rank, bool auto_merge) {
            py::gil_scoped_release unlocked;
            std::filesystem::path dir = std::filesystem::path(in).parent_path();
            if (dir.empty()) dir = ".";
            const auto options = options_of(strict, hints, op_profiles, onnx_fallback, guess_output_rank, auto_merge, dir.string());
            yobx::onnx::ModelFile file(in);
            const auto report = yobx::onnx::infer_shapes(file.model(), options);
            file.save(out);
            return report.to_json();
        },
        py::arg("in_path"), py::arg("out_path"), py::arg("strict"), py::arg("hints"), py::arg("op_profiles"), py::arg("onnx_fallback"),
        py::arg("guess_output_rank"), py::arg("auto_merge"), "(in path, out path, ...) -> report JSON; the weights stay in the files");

    m.def(
        "evaluate_shapes",
        [](const py::bytes& model, const Sizes& sizes, bool infer, bool strict, const Sizes& hints, const std::string& op_profiles,
           bool onnx_fallback) {
            const std::string_view bytes = view_of(model);
            const auto shapes = [&] {
                py::gil_scoped_release unlocked;
                auto file = yobx::onnx::ModelFile::view(bytes);
                yobx::onnx::ShapeReport report;
                if (infer) report = yobx::onnx::infer_shapes(file.model(), options_of(strict, hints, op_profiles, onnx_fallback, false, false, {}));
                return yobx::onnx::evaluate_shapes(file.model(), yobx::SymbolValues(sizes.begin(), sizes.end()), report);
            }();
            py::dict out;
            for (const auto& [name, shape] : shapes) out[name_of(name)] = py::cast(shape);
            return out;
        },
        py::arg("model"), py::arg("sizes"), py::arg("infer"), py::arg("strict"), py::arg("hints"), py::arg("op_profiles"),
        py::arg("onnx_fallback"), "(model bytes, sizes, ...) -> {value name (str, or bytes when not UTF-8): [dim or None] or None}");

    m.def(
        "memory",
        [](const py::bytes& model, const Sizes& at, const Sizes& minimum, bool infer, const std::string& plot, std::int64_t lo,
           std::int64_t hi, const Sizes& hints, const std::string& op_profiles, bool onnx_fallback) {
            const std::string_view bytes = view_of(model);
            py::gil_scoped_release unlocked;
            auto file = yobx::onnx::ModelFile::view(bytes);
            yobx::onnx::ShapeReport report;
            if (infer) report = yobx::onnx::infer_shapes(file.model(), options_of(false, hints, op_profiles, onnx_fallback, false, false, {}));
            // sizes and the plot's dim by symbol: "batch size" as the model writes it is batch_size
            const yobx::SymbolValues sizes = report.by_symbol(yobx::SymbolValues(at.begin(), at.end()));
            const std::string dim = plot.empty() ? std::string() : report.symbol_of(plot);
            yobx::SymbolValues asked = sizes;  // in the domain the peak is exact over
            if (!dim.empty()) asked.insert_or_assign(dim, std::min(lo, sizes.count(dim) ? sizes.at(dim) : lo));
            auto memory = yobx::onnx::memory_of(file.model(), report, yobx::SymbolValues(minimum.begin(), minimum.end()), asked);
            yobx::onnx::put_sizes(memory, sizes, dim);
            std::string svg = dim.empty() ? std::string() : yobx::onnx::memory_svg(memory, dim, lo, hi, sizes);
            return std::make_pair(memory.to_json(""), std::move(svg));
        },
        py::arg("model"), py::arg("at"), py::arg("minimum"), py::arg("infer"), py::arg("plot"), py::arg("lo"), py::arg("hi"),
        py::arg("hints"), py::arg("op_profiles"), py::arg("onnx_fallback"), "(model bytes, sizes, minimum sizes, ...) -> (memory report JSON, SVG or empty)");

    m.def(
        "payload_unread",
        [](int elem_type, const std::vector<std::int64_t>& dims) {
            // a negative dim or an overflow is the model's error, which C++ reports on the tensor given whole
            const auto count = yobx::onnx::detail::element_count(dims);
            return count && yobx::onnx::payload_unread(elem_type, dims.size(), *count);
        },
        py::arg("elem_type"), py::arg("dims"), "whether no inference reads the payload of a tensor of this type and dims (yobx/onnx/payload.hpp)");

    m.def("operator_table", &yobx::onnx::operator_table, "the operators yobx's rules cover, as docs/onnx.md lists them");

    // symbolic dims: expressions cross as yobx's printed text, which parse_sym reads back
    m.def("sym_canonical", [](const std::string& text) { return yobx::parse_sym(text).to_string(); }, py::arg("text"));
    m.def("sym_free_symbols", [](const std::string& text) { return yobx::parse_sym(text).free_symbols(); }, py::arg("text"));
    m.def(
        "sym_binary",
        [](const std::string& op, const std::string& a, const std::string& b) {
            return binary(op, yobx::parse_sym(a), yobx::parse_sym(b)).to_string();
        },
        py::arg("op"), py::arg("a"), py::arg("b"));
    m.def(
        "sym_subs",
        [](const std::string& text, const std::map<std::string, std::string>& values) {
            std::map<std::string, yobx::SymInt, std::less<>> subs;
            for (const auto& [k, v] : values) subs.emplace(k, yobx::parse_sym(v));
            return yobx::parse_sym(text).subs(subs).to_string();
        },
        py::arg("text"), py::arg("values"));
    m.def(
        "sym_evaluate",
        [](const std::string& text, const Sizes& values) {
            return yobx::parse_sym(text).evaluate_with(yobx::SymbolValues(values.begin(), values.end()));
        },
        py::arg("text"), py::arg("values"));
    m.def(
        "sym_simplify",
        [](const std::string& text, const Ranges& ranges) {
            const yobx::SymInt e = yobx::parse_sym(text);
            const yobx::ShapeEnv env = env_of({e}, ranges);
            return env.simplify(e).to_string();
        },
        py::arg("text"), py::arg("ranges"));
    m.def(
        "sym_decide",
        [](const std::string& a, const std::string& op, const std::string& b, const Ranges& ranges) -> std::optional<bool> {
            const yobx::SymInt x = yobx::parse_sym(a), y = yobx::parse_sym(b);
            const yobx::ShapeEnv env = env_of({x, y}, ranges);
            const yobx::SymBool c = relation(op, x, y);
            if (env.statically_known_true(c)) return true;
            if (env.statically_known_true(!c)) return false;
            return std::nullopt;
        },
        py::arg("a"), py::arg("op"), py::arg("b"), py::arg("ranges"));
}
