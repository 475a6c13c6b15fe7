// yobx/dtype.hpp — the element types of yobx's own tensor types.
//
// DenseTensor and SymTensor share this enum, so a symbolic tensor built from a
// dense one keeps its dtype. A user's tensor type brings its own dtype.
#pragma once

#include <ostream>
#include <string_view>

namespace yobx {

/// Element types of yobx's own tensors (DenseTensor, SymTensor). Printed as torch prints them (float32, int64...).
enum class DType { float32, float64, int32, int64, bool_ };

/// "float32", "int64", ... (torch's spelling without the "torch." prefix).
inline std::string_view to_string(DType d) {
    switch (d) {
        case DType::float32: return "float32";
        case DType::float64: return "float64";
        case DType::int32: return "int32";
        case DType::int64: return "int64";
        case DType::bool_: return "bool";
    }
    return "?";
}

inline std::ostream& operator<<(std::ostream& os, DType d) { return os << to_string(d); }

/// True for the integer types (the ones that can hold shape data).
constexpr bool is_integer(DType d) noexcept { return d == DType::int32 || d == DType::int64; }

}  // namespace yobx
