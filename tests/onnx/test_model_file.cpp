// ModelFile: a .onnx file read with its large initializer payloads left in the file,
// inferred, and written back with them spliced in. What it reads and writes must be
// what protobuf reads and what save_model writes, byte for byte once reparsed.
#include <yobx/adapters/onnx/shapes.hpp>

#include "../error_of.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using test::error_of;
using yobx::onnx::ModelFile;

namespace {

::onnx::TensorProto* tensor(::onnx::GraphProto& g, const char* name, int type, std::vector<std::int64_t> dims) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    return t;
}

/// A convolution and a Reshape with initializers of every kind ModelFile tells apart:
/// left in the file (rank >= 2 in raw_data, float_data and int64 raw_data; a float 1-D
/// tensor past SymTensor::max_values) or parsed (integer 1-D tensors, whatever their
/// size; tensors under 1 KB).
::onnx::ModelProto weighted_model() {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto& g = *m.mutable_graph();
    const int f = ::onnx::TensorProto::FLOAT, i64 = ::onnx::TensorProto::INT64;
    auto* x = g.add_input();
    x->set_name("x");
    auto* tt = x->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(f);
    for (const char* d : {"batch", "3", "height", "width"}) {
        auto* dim = tt->mutable_shape()->add_dim();
        if (d[0] == '3') dim->set_dim_value(3);
        else dim->set_dim_param(d);
    }
    tensor(g, "w", f, {16, 3, 3, 3})->set_raw_data(std::string(16 * 27 * 4, '\x01'));                // left: rank 4
    tensor(g, "w2", f, {16, 3, 3, 3})->mutable_float_data()->Resize(16 * 27, 0.5f);                 // left: float_data
    tensor(g, "bias", f, {5000})->set_raw_data(std::string(5000 * 4, '\x02'));                      // left: float 1-D, long
    tensor(g, "table", i64, {100, 20})->set_raw_data(std::string(100 * 20 * 8, '\x03'));            // left: rank 2
    tensor(g, "indices", i64, {5000})->mutable_int64_data()->Resize(5000, 7);                       // parsed: integer 1-D
    tensor(g, "small", f, {2, 2})->set_raw_data(std::string(16, '\x04'));                           // parsed: 16 bytes
    auto* shape = tensor(g, "shape", i64, {2});                                                     // parsed: data propagation
    shape->add_int64_data(0);
    shape->add_int64_data(-1);
    auto* conv = g.add_node();
    conv->set_op_type("Conv");
    conv->add_input("x");
    conv->add_input("w");
    conv->add_output("c");
    auto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(::onnx::AttributeProto::INTS);
    for (int k = 0; k < 4; ++k) pads->add_ints(1);
    auto* reshape = g.add_node();
    reshape->set_op_type("Reshape");
    reshape->add_input("c");
    reshape->add_input("shape");
    reshape->add_output("y");
    g.add_output()->set_name("y");
    return m;
}

std::string reparsed(const std::string& bytes) {
    ::onnx::ModelProto m;
    REQUIRE(m.ParseFromString(bytes));
    return m.SerializeAsString();
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("payload_unread: a weight's payload is read by no inference, a shape input's by ONNX's whatever its length") {
    using yobx::onnx::payload_unread;
    namespace elem = yobx::onnx::elem;
    CHECK(payload_unread(elem::float32, 2, 4));                            // rank 2: read by no rule
    CHECK(payload_unread(elem::int64, 2, 4));
    CHECK(payload_unread(elem::float32, 1, yobx::SymTensor::max_values + 1));
    CHECK_FALSE(payload_unread(elem::float32, 1, yobx::SymTensor::max_values));  // yobx reads its values
    CHECK_FALSE(payload_unread(elem::int64, 1, 1 << 20));                 // ONNX's inference may read it
    CHECK_FALSE(payload_unread(elem::int32, 0, 1));
    CHECK(payload_unread(elem::float16, 1, yobx::SymTensor::max_values + 1));
    CHECK(yobx::onnx::values_read(1, yobx::SymTensor::max_values));
    CHECK_FALSE(yobx::onnx::values_read(2, 1));
}

TEST_CASE("ModelFile leaves the payloads of large initializers in the file, and only them") {
    const ::onnx::ModelProto whole = weighted_model();
    ModelFile file = ModelFile::from_bytes(whole.SerializeAsString());
    const auto& g = file.model().graph();
    REQUIRE(g.initializer_size() == 7);
    std::vector<std::string> left;
    std::size_t bytes = 0;
    for (int k = 0; k < g.initializer_size(); ++k) {
        const auto& t = g.initializer(k);
        CHECK(t.name() == whole.graph().initializer(k).name());
        CHECK(t.dims_size() == whole.graph().initializer(k).dims_size());
        CHECK(t.data_type() == whole.graph().initializer(k).data_type());
        if (t.ByteSizeLong() == whole.graph().initializer(k).ByteSizeLong()) continue;
        left.push_back(t.name());
        CHECK((t.raw_data().empty() && t.float_data_size() == 0));
        bytes += whole.graph().initializer(k).ByteSizeLong() - t.ByteSizeLong();
    }
    CHECK(left == std::vector<std::string>{"w", "w2", "bias", "table"});
    CHECK(file.bytes_left_in_file() == bytes);
    CHECK(bytes > 16 * 27 * 4 * 2 + 5000 * 4 + 100 * 20 * 8);
    CHECK(reparsed(file.serialize()) == whole.SerializeAsString());
}

TEST_CASE("ModelFile infers the shapes load_model and infer_shapes infer, and writes what save_model writes") {
    ::onnx::ModelProto whole = weighted_model();
    const fs::path dir = fs::temp_directory_path() / "yobx_model_file";
    fs::create_directories(dir);
    const fs::path in = dir / "in.onnx";
    {
        std::ofstream o(in, std::ios::binary);
        REQUIRE(whole.SerializeToOstream(&o));
    }
    const std::string path = in.string(), out = (dir / "out.onnx").string();
    // as docs/onnx.md shows it
    yobx::onnx::ModelFile file(path);
    const yobx::onnx::ShapeReport shapes = yobx::onnx::infer_shapes(file.model());
    file.save(out);
    const auto full = yobx::onnx::infer_shapes(whole);
    CHECK(shapes.values == full.values);
    CHECK(shapes.dims == full.dims);
    CHECK(shapes.constant == full.constant);
    CHECK(shapes.symbolic == full.symbolic);
    CHECK(file.model().graph().output(0).type().tensor_type().shape().dim(1).dim_param() == "16*height*width");
    std::string expected;
    REQUIRE(whole.SerializeToString(&expected));
    CHECK(reparsed(file_bytes(out)) == expected);
    CHECK_FALSE(fs::exists(dir / "out.onnx.yobx-tmp"));
    // written over the file it was read from: the mapping keeps the old file's bytes
    file.save(in.string());
    CHECK(reparsed(file_bytes(in)) == expected);
    fs::remove_all(dir);
}

TEST_CASE("ModelFile moved keeps its payloads where they are") {
    const ::onnx::ModelProto whole = weighted_model();
    ModelFile first = ModelFile::from_bytes(whole.SerializeAsString());
    ModelFile second(std::move(first));
    CHECK(second.bytes_left_in_file() > 0);
    CHECK(reparsed(second.serialize()) == whole.SerializeAsString());
}

TEST_CASE("ModelFile reads what protobuf reads where its pass does not follow the file: parsed whole") {
    const ::onnx::ModelProto whole = weighted_model();
    // an unknown field of the group wire type at the top level: protobuf skips it
    std::string bytes = whole.SerializeAsString();
    bytes += std::string("\x9b\x06\x08\x01\x9c\x06", 6);  // group 99 { field 1: 1 }
    ::onnx::ModelProto by_protobuf;
    REQUIRE(by_protobuf.ParseFromString(bytes));
    ModelFile grouped = ModelFile::from_bytes(bytes);
    CHECK(grouped.bytes_left_in_file() == 0);
    CHECK(grouped.model().SerializeAsString() == by_protobuf.SerializeAsString());
    // the graph given twice: protobuf merges the two
    ::onnx::ModelProto extra;
    extra.mutable_graph()->add_output()->set_name("z");
    const std::string twice = whole.SerializeAsString() + extra.SerializeAsString();
    REQUIRE(by_protobuf.ParseFromString(twice));
    ModelFile merged = ModelFile::from_bytes(twice);
    CHECK(merged.bytes_left_in_file() == 0);
    CHECK(merged.model().graph().output_size() == 2);
    CHECK(reparsed(merged.serialize()) == by_protobuf.SerializeAsString());
}

TEST_CASE("ModelFile's errors name the file and what is wrong") {
    const std::string bytes = weighted_model().SerializeAsString();
    const std::string not_a_model =
        "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)";
    CHECK(error_of<yobx::value_error>([&] { (void)ModelFile::from_bytes(""); }) == not_a_model);
    CHECK(error_of<yobx::value_error>([&] { (void)ModelFile::from_bytes(bytes.substr(0, bytes.size() / 2)); }) == not_a_model);
    CHECK(error_of<yobx::value_error>([&] { (void)ModelFile::from_bytes(bytes.substr(0, bytes.size() - 3), "m.onnx"); }) ==
          "'m.onnx' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    ::onnx::ModelProto no_graph;
    no_graph.set_ir_version(8);
    CHECK(error_of<yobx::value_error>([&] { (void)ModelFile::from_bytes(no_graph.SerializeAsString()); }) ==
          "'<bytes>' has no graph");
    CHECK(error_of<yobx::value_error>([&] { ModelFile f("/nonexistent/model.onnx"); }) == "cannot open '/nonexistent/model.onnx'");
    CHECK(error_of<yobx::value_error>([&] { ModelFile f(fs::temp_directory_path().string()); }) ==
          "cannot open '" + fs::temp_directory_path().string() + "'");
    ModelFile file = ModelFile::from_bytes(bytes);
    CHECK(error_of<yobx::value_error>([&] { file.save("/nonexistent/out.onnx"); }) == "cannot write '/nonexistent/out.onnx'");
    // a file_error to whoever asks: the path and the errno Python's OSError is made of
    const auto code_of = [](auto f) -> std::pair<int, std::string> {
        try {
            f();
        } catch (const yobx::file_error& e) {
            return {e.code(), e.path()};
        }
        return {0, "no error"};
    };
    CHECK(code_of([&] { ModelFile f("/nonexistent/model.onnx"); }) == std::pair<int, std::string>{ENOENT, "/nonexistent/model.onnx"});
    CHECK(code_of([&] { ModelFile f(fs::temp_directory_path().string()); }) ==
          std::pair<int, std::string>{EISDIR, fs::temp_directory_path().string()});
    CHECK(code_of([&] { file.save("/nonexistent/out.onnx"); }) == std::pair<int, std::string>{ENOENT, "/nonexistent/out.onnx"});
    CHECK(code_of([&] { yobx::onnx::load_model("/nonexistent/model.onnx"); }) ==
          std::pair<int, std::string>{ENOENT, "/nonexistent/model.onnx"});
    CHECK(error_of<yobx::value_error>([&] { yobx::onnx::load_model(fs::temp_directory_path().string()); }) ==
          "cannot open '" + fs::temp_directory_path().string() + "'");
    CHECK(code_of([&] { yobx::onnx::load_model(fs::temp_directory_path().string()); }).first == EISDIR);
}

TEST_CASE("ModelFile refuses to save initializers added, removed or reordered after reading") {
    ModelFile removed = ModelFile::from_bytes(weighted_model().SerializeAsString());
    removed.model().mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);
    CHECK(error_of<yobx::value_error>([&] { (void)removed.serialize(); }) ==
          "cannot save '<bytes>': the graph's initializers were added, removed or reordered after it was read "
          "(initializer 0 was 'w', now 'w2'); ModelFile keeps their large payloads in the file and puts them back by position");
    ModelFile cut = ModelFile::from_bytes(weighted_model().SerializeAsString());
    cut.model().mutable_graph()->mutable_initializer()->DeleteSubrange(3, 4);
    CHECK(error_of<yobx::value_error>([&] { cut.save("never.onnx"); }) ==
          "cannot save 'never.onnx': the graph's initializers were added, removed or reordered after it was read "
          "(initializer 3 was 'table', now none); ModelFile keeps their large payloads in the file and puts them back by position");
    CHECK_FALSE(fs::exists("never.onnx"));
}
