// yobx/adapters/onnx/detail/wire.hpp — protobuf's wire format, read and written field by field.
//
// What ModelFile's pass over a model's bytes needs (fields as number, wire type and
// byte range; fields written back), and what the walk needs to write a value's type
// as protobuf serializes it without building the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace yobx::onnx {

namespace detail::wire {

// Protobuf's wire format, what the pass needs of it: fields as (number, wire type,
// byte range). Anything else (groups, a varint past 10 bytes, a length past the end)
// makes the pass give up, and the file is parsed whole.
enum : int { wire_varint = 0, wire_fixed64 = 1, wire_bytes = 2, wire_fixed32 = 5 };

struct Field {
    std::uint64_t number = 0;
    int type = 0;
    const char* begin = nullptr;  // the tag's first byte
    const char* data = nullptr;   // the payload (after a length for `bytes`)
    const char* end = nullptr;    // one past the field
    std::uint64_t value = 0;      // a varint's value
};

inline bool read_varint(const char*& p, const char* end, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        const auto b = static_cast<unsigned char>(*p++);
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/// The next field of [p, end); false at the end or on anything the pass does not follow.
inline bool next_field(const char*& p, const char* end, Field& f) {
    if (p >= end) return false;
    f.begin = p;
    std::uint64_t tag = 0;
    if (!read_varint(p, end, tag) || (tag >> 3) == 0) return false;
    f.number = tag >> 3;
    f.type = static_cast<int>(tag & 7);
    switch (f.type) {
        case wire_varint:
            f.data = p;
            if (!read_varint(p, end, f.value)) return false;
            break;
        case wire_fixed64:
        case wire_fixed32: {
            const std::size_t w = f.type == wire_fixed64 ? 8 : 4;
            if (static_cast<std::size_t>(end - p) < w) return false;
            f.data = p;
            p += w;
            break;
        }
        case wire_bytes: {
            std::uint64_t n = 0;
            if (!read_varint(p, end, n) || n > static_cast<std::uint64_t>(end - p)) return false;
            f.data = p;
            p += n;
            break;
        }
        default: return false;  // groups: deprecated, and never written by ONNX
    }
    f.end = p;
    return true;
}

/// The bytes put_varint writes for v.
inline std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
}

inline void put_varint(std::string& out, std::uint64_t v) {
    if (v < 0x80) {  // most: a tag, a length, a small dim
        out.push_back(static_cast<char>(v));
        return;
    }
    char bytes[10];
    std::size_t n = 0;
    for (; v >= 0x80; v >>= 7) bytes[n++] = static_cast<char>((v & 0x7f) | 0x80);
    bytes[n++] = static_cast<char>(v);
    out.append(bytes, n);
}

/// A field's tag: its number and wire type.
inline void put_tag(std::string& out, std::uint64_t number, int type) { put_varint(out, (number << 3) | static_cast<std::uint64_t>(type)); }

/// A length-delimited field's head (tag and length), its `size` bytes to follow.
inline void put_head(std::string& out, std::uint64_t number, std::size_t size) {
    put_tag(out, number, wire_bytes);
    put_varint(out, size);
}

/// The bytes of a length-delimited field whose payload is `size` bytes, head included.
inline std::size_t field_size(std::uint64_t number, std::size_t size) {
    return varint_size((number << 3) | wire_bytes) + varint_size(size) + size;
}

/// A length-delimited field whose payload is `data`.
inline void put_bytes(std::string& out, std::uint64_t number, std::string_view data) {
    put_head(out, number, data.size());
    out += data;
}

/// A message as a length-delimited field, serialized in place (as protobuf writes it).
template <class Message>
void put_message(std::string& out, std::uint64_t number, const Message& m) {
    const std::size_t size = m.ByteSizeLong();
    put_head(out, number, size);
    const std::size_t at = out.size();
    out.resize(at + size);
    m.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out.data() + at));
}

/// A packed field's payload is whole: each varint ends inside it, fixed widths divide it.
inline bool packed_ok(const Field& f, int element_type) {
    if (element_type == wire_fixed32) return (f.end - f.data) % 4 == 0;
    if (element_type == wire_fixed64) return (f.end - f.data) % 8 == 0;
    for (const char* p = f.data; p < f.end;) {
        std::uint64_t v = 0;
        if (!read_varint(p, f.end, v)) return false;
    }
    return true;
}

// TensorProto's field numbers.
inline constexpr std::uint64_t tensor_dims = 1, tensor_data_type = 2, tensor_name = 8, tensor_doc_string = 12,
                               tensor_data_location = 14;

// ModelProto.graph's field number.
inline constexpr std::uint64_t model_graph = 7;

/// The fields of a serialized ModelProto in order, its graph apart: `other(field)` for each
/// field but the graph, `graph(field)` for the graph (false: give up). False on malformed
/// bytes, a graph field of another wire type or given twice (protobuf would merge the two),
/// `graph` giving up, or no graph at all: a pass that does not follow the model as protobuf
/// would leaves it to protobuf.
template <class Other, class Graph>
bool model_fields(std::string_view model, Other&& other, Graph&& graph) {
    const char* p = model.data();
    const char* const end = p + model.size();
    Field f;
    bool graph_seen = false;
    while (p < end) {
        if (!next_field(p, end, f)) return false;
        if (f.number != model_graph) {
            other(f);
            continue;
        }
        if (f.type != wire_bytes || graph_seen) return false;
        graph_seen = true;
        if (!graph(f)) return false;
    }
    return graph_seen;
}

/// The element type of one of TensorProto's payload fields (float_data, int32_data,
/// int64_data, raw_data, double_data, uint64_data), or -1 for another field.
inline int payload_element(std::uint64_t number) {
    switch (number) {
        case 4: return wire_fixed32;  // float_data
        case 5: return wire_varint;   // int32_data
        case 7: return wire_varint;   // int64_data
        case 9: return wire_bytes;    // raw_data
        case 10: return wire_fixed64;  // double_data
        case 11: return wire_varint;   // uint64_data
        default: return -1;
    }
}

/// What a pass over a serialized TensorProto's fields finds (scan_tensor).
struct TensorFields {
    std::string_view name;        // the last name field, as protobuf reads it
    std::uint64_t data_type = 0;  // the last data_type field
    std::size_t rank = 0;
    std::int64_t count = 1;       // the element count, when valid_dims
    bool valid_dims = true;       // no negative dim, and a count that does not overflow
    std::size_t payload = 0;      // the bytes of its payload fields (float_data, raw_data...), tags included
};

/// Reads the fields of a serialized TensorProto [p, end), giving each to `each(field)` and each
/// dim to `dims` if given. False on what a pass does not follow: malformed bytes, a dims field of
/// another wire type, a payload field protobuf would not read as one.
template <class Each>
bool scan_tensor(const char* p, const char* end, TensorFields& t, Each&& each, std::vector<std::int64_t>* dims = nullptr) {
    const auto dim = [&](std::uint64_t d) {
        const auto v = static_cast<std::int64_t>(d);
        ++t.rank;
        if (dims != nullptr) dims->push_back(v);
        if (v < 0 || __builtin_mul_overflow(t.count, v, &t.count)) t.valid_dims = false;
    };
    Field f;
    while (p < end) {
        if (!next_field(p, end, f)) return false;
        if (f.number == tensor_dims) {
            if (f.type == wire_varint) {
                dim(f.value);
            } else if (f.type == wire_bytes) {
                for (const char* q = f.data; q < f.end;) {
                    std::uint64_t d = 0;
                    if (!read_varint(q, f.end, d)) return false;
                    dim(d);
                }
            } else {
                return false;
            }
        } else if (f.number == tensor_data_type && f.type == wire_varint) {
            t.data_type = f.value;
        } else if (f.number == tensor_name && f.type == wire_bytes) {
            t.name = std::string_view(f.data, static_cast<std::size_t>(f.end - f.data));
        }
        if (const int element = payload_element(f.number); element >= 0) {
            const bool packed = f.type == wire_bytes;
            if (!(packed || f.type == element) || (packed && element != wire_bytes && !packed_ok(f, element))) return false;
            t.payload += static_cast<std::size_t>(f.end - f.begin);
        }
        each(f);
    }
    return true;
}

}  // namespace detail::wire

}  // namespace yobx::onnx
