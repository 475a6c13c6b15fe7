// yobx/adapters/onnx/detail/type_sinks.hpp — where the walk writes a value's type.
//
// write_type states a type once, as calls on a sink: ProtoType sets a TypeProto's fields,
// WireType writes the bytes protobuf would serialize for them (a ValueInfoProto appended to a
// GraphProto's value_info field) without building a message, for a caller that merges them.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>
#include <yobx/adapters/onnx/detail/wire.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace yobx::onnx::detail {

/// Where write_type writes a type: a TypeProto...
struct ProtoType {
    ::onnx::TypeProto& out;
    ::onnx::TensorShapeProto* shape = nullptr;
    void other(const ::onnx::TypeProto& t) { out = t; }
    void elem_type(int type) { out.mutable_tensor_type()->set_elem_type(type); }
    void start_shape() { shape = out.mutable_tensor_type()->mutable_shape(); }
    ::onnx::TensorShapeProto_Dimension* dim() {
        if (shape == nullptr) start_shape();
        return shape->add_dim();
    }
    void dim_value(std::int64_t v) { dim()->set_dim_value(v); }
    void dim_param(const std::string& p) { dim()->set_dim_param(p); }
    void unknown_dim() { (void)dim(); }
};

/// ... or its serialization, written as protobuf writes it (fields in order, a set field
/// written even when 0, negative integers as 10-byte varints), without building the message.
struct WireType {
    // field numbers: TypeProto.tensor_type, Tensor.elem_type and shape, TensorShapeProto.dim,
    // Dimension.dim_value and dim_param, ValueInfoProto.name and type, GraphProto.value_info
    static constexpr std::uint64_t tensor_type = 1, elem_type_field = 1, shape = 2, dim = 1, dim_value_field = 1,
                                   dim_param_field = 2, name_field = 1, type_field = 2, value_info = 13;
    std::string other_, shape_, tensor_;
    int elem_type_ = 0;
    bool is_other_ = false, has_shape_ = false;
    void clear() {
        other_.clear();
        shape_.clear();
        elem_type_ = 0;
        is_other_ = has_shape_ = false;
    }
    void other(const ::onnx::TypeProto& t) {
        is_other_ = true;
        t.SerializeToString(&other_);
    }
    void elem_type(int type) { elem_type_ = type; }
    void start_shape() { has_shape_ = true; }
    void dim_value(std::int64_t v) {
        has_shape_ = true;
        const auto value = static_cast<std::uint64_t>(v);
        wire::put_head(shape_, dim, 1 + wire::varint_size(value));  // the tag of dim_value is one byte
        wire::put_tag(shape_, dim_value_field, wire::wire_varint);
        wire::put_varint(shape_, value);
    }
    void dim_param(const std::string& p) {
        has_shape_ = true;
        wire::put_head(shape_, dim, wire::field_size(dim_param_field, p.size()));
        wire::put_bytes(shape_, dim_param_field, p);
    }
    void unknown_dim() {
        has_shape_ = true;
        wire::put_head(shape_, dim, 0);
    }
    /// A ValueInfoProto {name, type} as GraphProto's value_info field, appended to `out`.
    void append_value_info(std::string& out, std::string_view name) {
        const std::string* type = &other_;
        if (!is_other_) {
            tensor_.clear();
            const auto elem = static_cast<std::uint64_t>(static_cast<std::int64_t>(elem_type_));
            const std::size_t body = 1 + wire::varint_size(elem) + (has_shape_ ? wire::field_size(shape, shape_.size()) : 0);
            wire::put_head(tensor_, tensor_type, body);
            wire::put_tag(tensor_, elem_type_field, wire::wire_varint);
            wire::put_varint(tensor_, elem);
            if (has_shape_) wire::put_bytes(tensor_, shape, shape_);
            type = &tensor_;
        }
        wire::put_head(out, value_info, wire::field_size(name_field, name.size()) + wire::field_size(type_field, type->size()));
        wire::put_bytes(out, name_field, name);
        wire::put_bytes(out, type_field, *type);
    }
};

}  // namespace yobx::onnx::detail
