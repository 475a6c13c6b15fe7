// yobx/onnx/elem_type.hpp — ONNX's element types, defined once: code, name, size.
//
// One table (TensorProto::DataType's codes, the names numpy and torch spell, the bits of one
// element as ONNX packs them); the named constants the rules use, `elem_bits`, `elem_name` and
// `elem_type_of` all read it, so a type added to ONNX is one row here.
//
//   yobx::onnx::elem_bits(yobx::onnx::elem::bfloat16);  // 16
//   yobx::onnx::elem_name(22);                          // "int4"
//   yobx::onnx::elem_type_of("float");                  // 1 (float32)
#pragma once

#include <yobx/dtype.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace yobx::onnx {

namespace elem {

/// One of ONNX's element types: its TensorProto::DataType code, its name, the bits of one element
/// (4 for the packed int4, uint4 and float4e2m1, 2 for uint2 and int2; 0 for string, which has no
/// fixed size).
struct TypeInfo {
    int code;
    std::string_view name;
    std::int64_t bits;
};

/// Every element type yobx knows, by code (the row of code N is types[N]).
inline constexpr TypeInfo types[] = {
    {0, "undefined", 0},       {1, "float32", 32},         {2, "uint8", 8},          {3, "int8", 8},
    {4, "uint16", 16},         {5, "int16", 16},           {6, "int32", 32},         {7, "int64", 64},
    {8, "string", 0},          {9, "bool", 8},             {10, "float16", 16},      {11, "float64", 64},
    {12, "uint32", 32},        {13, "uint64", 64},         {14, "complex64", 64},    {15, "complex128", 128},
    {16, "bfloat16", 16},      {17, "float8e4m3fn", 8},    {18, "float8e4m3fnuz", 8}, {19, "float8e5m2", 8},
    {20, "float8e5m2fnuz", 8}, {21, "uint4", 4},           {22, "int4", 4},          {23, "float4e2m1", 4},
    {24, "float8e8m0", 8},     {25, "uint2", 2},           {26, "int2", 2},
};

static_assert([] {
    for (int i = 0; i < static_cast<int>(sizeof(types) / sizeof(types[0])); ++i)
        if (types[i].code != i) return false;
    return true;
}(), "elem::types: the row of code N is types[N]");

/// The other names a dtype is read by (ONNX's own spellings of float32 and float64).
inline constexpr std::pair<std::string_view, int> aliases[] = {{"float", 1}, {"double", 11}};

/// The row of a code, or nullptr for a code yobx does not know.
constexpr const TypeInfo* find(int code) noexcept {
    return code >= 0 && code < static_cast<int>(sizeof(types) / sizeof(types[0])) ? &types[code] : nullptr;
}

/// The codes the rules name.
inline constexpr int undefined = 0, float32 = 1, uint8 = 2, int8 = 3, uint16 = 4, int16 = 5, int32 = 6, int64 = 7,
                     string = 8, bool_ = 9, float16 = 10, float64 = 11, uint32 = 12, uint64 = 13, bfloat16 = 16;

/// The types whose values data propagation follows (bool as 0 and 1: Where(Equal(shape, -1), ...)).
constexpr bool holds_shape_values(int t) noexcept { return t == int64 || t == int32 || t == bool_; }
/// The float types whose integer values data propagation follows: a size cast to float on its
/// way back to an integer (`int(h * 0.5)`), exact up to 2^24 (float32) and 2^53 (float64).
constexpr bool holds_integer_floats(int t) noexcept { return t == float32 || t == float64; }
/// The types a TensorInfo's `values` are kept for.
constexpr bool carries_values(int t) noexcept { return holds_shape_values(t) || holds_integer_floats(t); }

}  // namespace elem

/// The bits of one element of an ONNX element type (4 for the packed int4, uint4 and
/// float4e2m1, 2 for uint2 and int2; 8 for the float8 types), 0 for string (no fixed size) and
/// unknown types.
constexpr std::int64_t elem_bits(int elem_type) noexcept {
    const elem::TypeInfo* t = elem::find(elem_type);
    return t ? t->bits : 0;
}

/// The name of an ONNX element type as numpy and torch spell it (`float32`, `int4`), or `type N`.
inline std::string elem_name(int elem_type) {
    const elem::TypeInfo* t = elem::find(elem_type);
    return t ? std::string(t->name) : "type " + std::to_string(elem_type);
}

/// The ONNX element type of a dtype name (float32, int64, bool, float, double...), or undefined.
constexpr int elem_type_of(std::string_view name) noexcept {
    for (const elem::TypeInfo& t : elem::types)
        if (t.name == name) return t.code;
    for (const auto& [alias, code] : elem::aliases)
        if (alias == name) return code;
    return elem::undefined;
}

namespace detail {

/// yobx's own dtypes, in DType's order.
inline constexpr DType dtypes[] = {DType::float32, DType::float64, DType::int32, DType::int64, DType::bool_};
static_assert([] {
    for (std::size_t i = 0; i < std::size(dtypes); ++i)
        if (static_cast<std::size_t>(dtypes[i]) != i) return false;
    return true;
}(), "detail::dtypes: the row of DType d is dtypes[d]");

/// The ONNX code of each of yobx's own dtypes, in DType's order, read once from the table by
/// name (DType's names are the table's): ShapeInference converts every input and output.
inline const std::array<int, std::size(dtypes)>& dtype_codes() noexcept {
    static const std::array<int, std::size(dtypes)> codes = [] {
        std::array<int, std::size(dtypes)> c{};
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = elem_type_of(to_string(dtypes[i]));
        return c;
    }();
    return codes;
}

}  // namespace detail

/// The ONNX element type of one of yobx's own dtypes.
inline int elem_type_of(DType d) noexcept { return detail::dtype_codes()[static_cast<std::size_t>(d)]; }

/// The DType of an ONNX element type, nullopt for a type DType does not have (float16, uint8...).
inline std::optional<DType> dtype_of_elem(int elem_type) noexcept {
    const auto& codes = detail::dtype_codes();
    for (std::size_t i = 0; i < codes.size(); ++i)
        if (codes[i] == elem_type) return detail::dtypes[i];
    return std::nullopt;
}

}  // namespace yobx::onnx
