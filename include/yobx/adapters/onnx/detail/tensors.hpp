// yobx/adapters/onnx/detail/tensors.hpp — what inference reads of ONNX's protobuf tensors and attributes.
//
// An initializer or a tensor attribute becomes a TensorInfo: its type, its dims
// and, for a small integer or float tensor, its contents, which data
// propagation follows. External data is read only for a small integer tensor,
// only from inside the model's directory (external_bytes).
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/payload.hpp>
#include <yobx/shape/sym_tensor.hpp>


#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

/// The element count of dims (a TensorProto's, or any range of int64), nullopt on overflow or a negative dim.
template <class Dims>
std::optional<std::int64_t> element_count(const Dims& dims) {
    std::int64_t n = 1;
    for (auto d : dims)
        if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
    return n;
}

/// The `n` values of type T that `raw` holds (little-endian, as ONNX stores them), each made an
/// Out as it is read; nullopt when `raw` does not hold n of them.
template <class T, class Out>
std::optional<std::vector<Out>> raw_values(const std::string& raw, std::int64_t n) {
    if (raw.size() != static_cast<std::size_t>(n) * sizeof(T)) return std::nullopt;
    std::vector<Out> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < raw.size(); i += sizeof(T)) {
        T v;
        std::memcpy(&v, raw.data() + i, sizeof(T));
        out.emplace_back(v);
    }
    return out;
}

/// The bytes of a small tensor stored outside the model: `location` relative to `dir`,
/// resolved (`..`, symlinks) and required to stay inside it, a regular file, offset and
/// length checked against its size before anything is read or allocated. A location that
/// escapes, or a range past the file's end, is a value_error naming it.
inline std::string external_bytes(const ::onnx::TensorProto& t, const std::filesystem::path& dir, std::size_t want,
                                  std::string_view what) {
    namespace fs = std::filesystem;
    std::string location;
    std::int64_t offset = 0, length = -1;
    const auto number = [&](const std::string& key, const std::string& v) {
        std::int64_t x = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || end != v.data() + v.size() || x < 0)
            throw value_error(std::string(what) + ": external data " + key + " '" + v + "' is not a size");
        return x;
    };
    for (const auto& e : t.external_data()) {
        if (e.key() == "location") location = e.value();
        else if (e.key() == "offset") offset = number("offset", e.value());
        else if (e.key() == "length") length = number("length", e.value());
    }
    if (location.empty()) throw value_error(std::string(what) + ": external data without a location");
    const fs::path rel(location);
    if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
        throw value_error(std::string(what) + ": external data location '" + location + "' is absolute; it must be inside the model's directory");
    std::error_code ec;
    const fs::path root = fs::canonical(dir, ec);
    if (ec) throw value_error(std::string(what) + ": the model's directory '" + dir.string() + "' cannot be resolved");
    const fs::path file = fs::weakly_canonical(root / rel, ec);
    const auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    if (ec || r != root.end())
        throw value_error(std::string(what) + ": external data location '" + location + "' escapes the model's directory");
    if (!fs::is_regular_file(file, ec)) throw value_error(std::string(what) + ": external data '" + location + "' is not a regular file");
    const auto size = fs::file_size(file, ec);
    if (ec) throw value_error(std::string(what) + ": external data '" + location + "' cannot be read");
    const auto len = length < 0 ? static_cast<std::uint64_t>(want) : static_cast<std::uint64_t>(length);
    if (static_cast<std::uint64_t>(offset) > size || len > size - static_cast<std::uint64_t>(offset))
        throw value_error(std::string(what) + ": external data '" + location + "' offset " + std::to_string(offset) + " and length " +
                          std::to_string(len) + " are past its end (" + std::to_string(size) + " bytes)");
    if (len != want)
        throw value_error(std::string(what) + ": external data '" + location + "' has " + std::to_string(len) + " bytes for " +
                          std::to_string(want) + " expected");
    std::string bytes(want, '\0');
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(want)))
        throw value_error(std::string(what) + ": external data '" + location + "' cannot be read");
    return bytes;
}

/// A tensor as an error names it: `initializer 'w'`, `attribute 'value' of node 'n'`; the text
/// is built only for an error, not for every initializer of a model.
struct TensorName {
    std::string_view kind;  // "initializer" or "attribute"
    std::string_view name;
    std::optional<std::string_view> node = {};  // an attribute's node
    std::string str() const {
        std::string out = std::string(kind) + " '" + std::string(name) + "'";
        return node ? out + " of node '" + std::string(*node) + "'" : out;
    }
};

/// What inference needs of an initializer or a tensor attribute: type, dims, and the
/// contents of a small integer or floating-point tensor stored in the model itself.
/// External data is read only for a small integer tensor and only given the model's
/// directory (external_bytes); any other external tensor is known by its dims alone.
inline TensorInfo tensor_info(const ::onnx::TensorProto& t, const TensorName& what, const std::filesystem::path& dir = {}) {
    TensorInfo info;
    info.elem_type = t.data_type();
    Shape shape;
    shape.reserve(static_cast<std::size_t>(t.dims_size()));
    for (auto d : t.dims()) {
        if (d < 0) throw value_error(what.str() + " has a negative dimension " + std::to_string(d));
        shape.push_back(d);
    }
    info.shape = std::move(shape);
    const auto n = element_count(t.dims());
    if (!n) throw value_error(what.str() + ": the element count of its dims overflows");
    if (!values_read(static_cast<std::size_t>(t.dims_size()), *n)) return info;
    const bool external = t.data_location() == ::onnx::TensorProto::EXTERNAL;
    if (external) {
        const std::size_t width = t.data_type() == elem::int64 ? 8 : t.data_type() == elem::int32 ? 4 : 0;
        if (dir.empty() || width == 0) return info;
        ::onnx::TensorProto inline_copy;
        inline_copy.set_data_type(t.data_type());
        *inline_copy.mutable_dims() = t.dims();
        inline_copy.set_raw_data(external_bytes(t, dir, static_cast<std::size_t>(*n) * width, what.str()));
        return tensor_info(inline_copy, what);
    }
    const bool raw = t.has_raw_data();
    // each value read straight into what TensorInfo holds: SymInt or double
    auto set_ints = [&](const auto& v) {
        if (static_cast<std::int64_t>(v.size()) == *n) info.values = std::vector<SymInt>(v.begin(), v.end());
    };
    auto set_reals = [&](const auto& v) {
        if (static_cast<std::int64_t>(v.size()) == *n) info.reals = std::vector<double>(v.begin(), v.end());
    };
    switch (t.data_type()) {
        case elem::int64:
            if (raw) info.values = raw_values<std::int64_t, SymInt>(t.raw_data(), *n);
            else set_ints(t.int64_data());
            break;
        case elem::int32:
            if (raw) info.values = raw_values<std::int32_t, SymInt>(t.raw_data(), *n);
            else set_ints(t.int32_data());
            break;
        case elem::bool_:
            if (raw) info.values = raw_values<std::uint8_t, SymInt>(t.raw_data(), *n);
            else set_ints(t.int32_data());
            if (info.values)
                for (auto& v : *info.values) v = v.maybe_constant() != 0 ? 1 : 0;
            break;
        case elem::float32:
            if (raw) info.reals = raw_values<float, double>(t.raw_data(), *n);
            else set_reals(t.float_data());
            break;
        case elem::float64:
            if (raw) info.reals = raw_values<double, double>(t.raw_data(), *n);
            else set_reals(t.double_data());
            break;
        default: break;
    }
    return info;
}

inline Attribute attribute_of(const ::onnx::AttributeProto& a, std::string_view node, const std::filesystem::path& dir) {
    Attribute out;
    using A = ::onnx::AttributeProto;
    switch (a.type()) {
        case A::INT: out.kind = Attribute::Kind::int_; out.i = a.i(); break;
        case A::FLOAT: out.kind = Attribute::Kind::float_; out.f = a.f(); break;
        case A::STRING: out.kind = Attribute::Kind::string; out.s = a.s(); break;
        case A::INTS: out.kind = Attribute::Kind::ints; out.ints.assign(a.ints().begin(), a.ints().end()); break;
        case A::FLOATS: out.kind = Attribute::Kind::floats; out.floats.assign(a.floats().begin(), a.floats().end()); break;
        case A::STRINGS: out.kind = Attribute::Kind::strings; out.strings.assign(a.strings().begin(), a.strings().end()); break;
        case A::TENSOR:
            out.kind = Attribute::Kind::tensor;
            out.tensor = tensor_info(a.t(), TensorName{"attribute", a.name(), node}, dir);
            break;
        case A::GRAPH: out.kind = Attribute::Kind::graph; break;
        default: break;
    }
    return out;
}

/// Whether a dim_param is a name with a hyphen rather than an expression: a '-' joins two name
/// characters (letters, digits, '_', any byte past ASCII) with no space ("seq-len", "max-tokens").
/// ONNX and onnxruntime take every dim_param as a name; yobx reads one as an expression when it
/// is one ("past + seq", "(h + 7)//8"), and every printer of the expressions it reads (its own,
/// SymPy's, optimum's) spaces a binary minus ("seq - len"), so "seq-len" is read as the name it is.
inline bool hyphenated_name(std::string_view text) {
    const auto name_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               static_cast<unsigned char>(c) >= 0x80;
    };
    for (std::size_t i = 1; i + 1 < text.size(); ++i)
        if (text[i] == '-' && name_char(text[i - 1]) && name_char(text[i + 1])) return true;
    return false;
}

/// A name parse_sym reads as one symbol: letters, digits and '_' ('batch size' is batch_size).
inline std::string symbol_name(std::string_view text) {
    std::string s;
    for (char c : text) s += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') ? c : '_';
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "_" + s;
    for (const char* r : {"Max", "Min", "Mod", "FloorDiv", "Eq", "Ne", "True", "False"})
        if (s == r) s += "_";
    return s;
}

}  // namespace yobx::onnx::detail
