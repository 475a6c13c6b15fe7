// yobx/adapters/onnx/detail/light_model.hpp — a model's bytes read for inference without protobuf's parse of its graph.
//
// On a small model protobuf's parse costs more than the inference: every name of every
// node is a string of its own (the fused BERT's 18 nodes, 21 initializers: a third of
// the call, parsing and freeing them). LightModel reads the nodes itself, their names as
// views of the bytes, and each initializer into one reused TensorProto (its large payload
// left out, as ModelFile leaves it; a large one of plain fields not even that) to take what
// inference needs of it at once; protobuf parses the rest, as protobuf would parse it in the
// model: the model's own fields and the graph's inputs, outputs and value_info (a small
// "shell" ModelProto), each node's attributes and its other fields. It gives up (read() is
// false, the caller parses the bytes with protobuf) on whatever it does not follow the same
// way: a node with a subgraph or of control flow, a field given twice where protobuf would
// merge it, malformed bytes; what it reads is what protobuf would read.
//
// The walk (Walker) reads a LightGraph as it reads a GraphProto: the same names, views.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/adapters/onnx/detail/tensors.hpp>
#include <yobx/onnx/payload.hpp>
#include <yobx/adapters/onnx/detail/wire.hpp>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

/// Whether a node is If, Loop or Scan (of the default domain): control flow, whose subgraphs
/// the walk walks.
inline bool is_control_flow(std::string_view domain, std::string_view op_type) {
    return (domain.empty() || domain == "ai.onnx") && (op_type == "If" || op_type == "Loop" || op_type == "Scan");
}

/// A node as the walk reads it: NodeProto's accessors, names as views of the model's bytes.
class LightNode {
public:
    /// The node's attributes, parsed (a range of AttributeProto, as NodeProto's).
    struct Attributes {
        using iterator = google::protobuf::RepeatedPtrField<::onnx::AttributeProto>::const_iterator;
        iterator first, last;
        iterator begin() const { return first; }
        iterator end() const { return last; }
    };

    std::string_view name() const noexcept { return name_; }
    std::string_view op_type() const noexcept { return op_type_; }
    std::string_view domain() const noexcept { return domain_; }
    std::span<const std::string_view> input() const noexcept { return input_; }
    std::span<const std::string_view> output() const noexcept { return output_; }
    std::string_view output(int k) const noexcept { return output_[static_cast<std::size_t>(k)]; }
    int input_size() const noexcept { return static_cast<int>(input_.size()); }
    int output_size() const noexcept { return static_cast<int>(output_.size()); }
    const Attributes& attribute() const noexcept { return attribute_; }

private:
    friend class LightModel;
    std::string_view name_, op_type_, domain_;
    std::span<const std::string_view> input_, output_;
    Attributes attribute_;
    std::size_t first_name_ = 0, inputs_ = 0, outputs_ = 0;  // where its names are, while reading
    int first_attribute_ = 0, attributes_ = 0;
};

/// An initializer as the walk reads it: its name, and what tensor_info gave (or threw).
struct LightInitializer {
    std::string_view name_;
    TensorInfo info;           // taken by the walk
    std::exception_ptr error;  // tensor_info's error, thrown by the walk where it reads the initializer
    std::string_view name() const noexcept { return name_; }
};

/// A graph as the walk reads it: GraphProto's accessors over the nodes and initializers read
/// here, the rest forwarded to the shell's graph.
class LightGraph {
public:
    int node_size() const noexcept { return static_cast<int>(nodes_.size()); }
    const LightNode& node(int i) const noexcept { return nodes_[static_cast<std::size_t>(i)]; }
    LightNode* mutable_node(int i) noexcept { return &nodes_[static_cast<std::size_t>(i)]; }
    std::span<const LightNode> node() const noexcept { return nodes_; }
    int initializer_size() const noexcept { return static_cast<int>(initializers_.size()); }
    std::span<LightInitializer> initializer() noexcept { return initializers_; }
    std::span<const LightInitializer> initializer() const noexcept { return initializers_; }

    const auto& input() const { return shell_->input(); }
    int input_size() const { return shell_->input_size(); }
    const auto& output() const { return shell_->output(); }
    auto* mutable_output() { return shell_->mutable_output(); }
    auto* mutable_value_info() { return shell_->mutable_value_info(); }
    auto* add_value_info() { return shell_->add_value_info(); }
    google::protobuf::Arena* GetArena() const { return shell_->GetArena(); }

private:
    friend class LightModel;
    ::onnx::GraphProto* shell_ = nullptr;
    std::vector<LightNode> nodes_;
    std::vector<LightInitializer> initializers_;
};

/// A serialized ModelProto read as above. read() once; the bytes must outlive the model.
class LightModel {
public:
    LightModel() = default;
    LightModel(const LightModel&) = delete;
    LightModel& operator=(const LightModel&) = delete;

    /// Reads `bytes`; false when it does not follow them the way protobuf would (parse them
    /// with protobuf then). Initializers' external data is read as tensor_info reads it, from
    /// `dir` (none when empty).
    bool read(std::string_view bytes, const std::filesystem::path& dir) {
        using namespace wire;
        dir_ = &dir;
        std::string model, graph;  // the shell: every field but the graph's nodes and initializers
        if (!model_fields(
                bytes, [&](const Field& f) { model.append(f.begin, f.end); },
                [&](const Field& f) { return read_graph(f.data, f.end, graph); }))
            return false;
        put_bytes(model, model_graph, graph);
        shell_ = google::protobuf::Arena::CreateMessage<::onnx::ModelProto>(&arena_);
        if (!shell_->ParseFromString(model)) return false;
        graph_.shell_ = shell_->mutable_graph();
        for (auto& n : graph_.nodes_) {
            const std::span<const std::string_view> names(names_);
            n.input_ = names.subspan(n.first_name_, n.inputs_);
            n.output_ = names.subspan(n.first_name_ + n.inputs_, n.outputs_);
            n.attribute_ = LightNode::Attributes{attributes_.begin() + n.first_attribute_,
                                                 attributes_.begin() + n.first_attribute_ + n.attributes_};
        }
        return true;
    }

    const auto& opset_import() const { return shell_->opset_import(); }
    LightGraph& graph() noexcept { return graph_; }
    const LightGraph& graph() const noexcept { return graph_; }
    LightGraph* mutable_graph() noexcept { return &graph_; }

private:
    bool read_graph(const char* p, const char* end, std::string& rest) {
        using namespace wire;
        Field f;
        std::size_t nodes = 0, initializers = 0;
        for (const char* q = p; q < end;) {
            if (!next_field(q, end, f)) return false;
            nodes += f.number == 1;
            initializers += f.number == 5;
        }
        graph_.nodes_.reserve(nodes);
        graph_.initializers_.reserve(initializers);
        names_.reserve(4 * nodes);
        while (p < end) {
            if (!next_field(p, end, f)) return false;
            if (f.type == wire_bytes && f.number == 1) {  // GraphProto.node
                if (!read_node(f.data, f.end)) return false;
            } else if (f.type == wire_bytes && f.number == 5) {  // GraphProto.initializer
                if (!read_initializer(f.data, f.end)) return false;
            } else {
                rest.append(f.begin, f.end);
            }
        }
        return true;
    }

    bool read_node(const char* p, const char* end) {
        using namespace wire;
        LightNode n;
        inputs_.clear();
        outputs_.clear();
        other_.clear();
        n.first_attribute_ = attributes_.size();
        Field f;
        while (p < end) {
            if (!next_field(p, end, f)) return false;
            const std::string_view text(f.data, static_cast<std::size_t>(f.end - f.data));
            if (f.type != wire_bytes) {
                other_.append(f.begin, f.end);
                continue;
            }
            switch (f.number) {  // NodeProto's fields
                case 1: inputs_.push_back(text); break;
                case 2: outputs_.push_back(text); break;
                case 3: n.name_ = text; break;
                case 4: n.op_type_ = text; break;
                case 7: n.domain_ = text; break;
                case 5:
                    if (!read_attribute(f.data, f.end)) return false;
                    break;
                default: other_.append(f.begin, f.end);
            }
        }
        // the node's other fields (doc_string, metadata...) as protobuf would read them
        if (!other_.empty() && !scratch_node_.ParseFromString(other_)) return false;
        if (is_control_flow(n.domain_, n.op_type_)) return false;
        n.attributes_ = attributes_.size() - n.first_attribute_;
        n.first_name_ = names_.size();
        n.inputs_ = inputs_.size();
        n.outputs_ = outputs_.size();
        names_.insert(names_.end(), inputs_.begin(), inputs_.end());
        names_.insert(names_.end(), outputs_.begin(), outputs_.end());
        graph_.nodes_.push_back(n);
        return true;
    }

    bool read_attribute(const char* p, const char* end) {
        using namespace wire;
        auto* a = attributes_.Add();
        const auto size = static_cast<int>(end - p);
        // types (tp, type_protos) nest without bound: those parsed with the depth protobuf has
        // left at a node's attribute (model, graph, node), so that what it refuses is refused
        bool nested_types = false;
        Field f;
        for (const char* q = p; q < end;) {
            if (!next_field(q, end, f)) return false;
            nested_types = nested_types || f.number == 14 || f.number == 15;
        }
        if (nested_types) {
            google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(p), size);
            in.SetRecursionLimit(google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit() - 3);
            if (!a->ParseFromCodedStream(&in)) return false;
        } else if (!a->ParseFromArray(p, size)) {
            return false;
        }
        return !a->has_g() && a->graphs_size() == 0;  // a subgraph: the walk's own path
    }

    /// The initializer parsed into the reused tensor_ without the payload of a large one (which
    /// no inference reads: payload_unread),
    /// the payloads checked as protobuf checks them (ModelFile's pass), and tensor_info taken.
    bool read_initializer(const char* p, const char* end) {
        using namespace wire;
        LightInitializer init;
        // plain: only fields of which a large tensor's TensorInfo is made here, as tensor_info makes
        // it (dims, data_type, name; a doc string, a data location, the payloads: read by no one)
        bool plain = true;
        other_.clear();
        dims_.clear();
        TensorFields t;
        const auto each = [&](const Field& f) {
            const bool read_here = f.number == tensor_dims || (f.number == tensor_data_type && f.type == wire_varint) ||
                                   (f.number == tensor_name && f.type == wire_bytes);
            const bool unused = (f.number == tensor_doc_string && f.type == wire_bytes) ||
                                (f.number == tensor_data_location && f.type == wire_varint);
            const bool payload = payload_element(f.number) >= 0;
            plain = plain && (read_here || unused || payload);
            if (!payload) other_.append(f.begin, f.end);
        };
        if (!scan_tensor(p, end, t, each, &dims_)) return false;
        init.name_ = t.name;
        const bool unread = t.valid_dims && payload_unread(static_cast<int>(t.data_type), t.rank, t.count);
        if (unread && plain) {  // what tensor_info gives: the type (an int32 field) and the dims
            init.info.elem_type = static_cast<std::int32_t>(t.data_type);
            Shape shape;
            shape.reserve(t.rank);
            for (const std::int64_t d : dims_) shape.push_back(d);
            init.info.shape = std::move(shape);
            graph_.initializers_.push_back(std::move(init));
            return true;
        }
        const bool parsed = unread && t.payload > 0 ? tensor_.ParseFromString(other_)
                                                    : tensor_.ParseFromArray(p, static_cast<int>(end - p));
        if (!parsed) return false;
        try {
            init.info = tensor_info(tensor_, TensorName{"initializer", init.name_}, *dir_);
        } catch (const yobx::error&) {
            init.error = std::current_exception();
        }
        graph_.initializers_.push_back(std::move(init));
        return true;
    }

    google::protobuf::Arena arena_;
    ::onnx::ModelProto* shell_ = nullptr;
    LightGraph graph_;
    std::vector<std::string_view> names_;  // every node's inputs then outputs, node after node
    google::protobuf::RepeatedPtrField<::onnx::AttributeProto> attributes_{&arena_};
    const std::filesystem::path* dir_ = nullptr;  // read()'s, while it reads
    // reading's scratch, reused from node to node and tensor to tensor (no allocation each)
    std::vector<std::string_view> inputs_, outputs_;
    std::vector<std::int64_t> dims_;
    std::string other_;
    ::onnx::NodeProto scratch_node_;
    ::onnx::TensorProto tensor_;
};

}  // namespace yobx::onnx::detail
