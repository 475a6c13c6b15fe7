// yobx/adapters/onnx/model_file.hpp — a .onnx file read and written without copying its weights.
//
// Shape inference needs an initializer's type and dims, and the values of small
// 1-D tensors; a model's bytes are mostly the payloads of its large initializers.
// ModelFile maps the file, parses a copy of it in which those payloads are left
// out (a wire-level pass over ModelProto.graph.initializer), and on save splices
// the payloads back from the mapped file into what protobuf serializes: resnet18's
// 46 MB are never parsed, copied into messages or serialized again. A file the
// pass does not follow (groups, a graph field given twice, a malformed length) is
// parsed whole instead, so what is read is always what protobuf reads.
//
//   yobx::onnx::ModelFile file("model.onnx");
//   yobx::onnx::infer_shapes(file.model());
//   file.save("shaped.onnx");
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>
#include <yobx/adapters/onnx/detail/wire.hpp>

#include <yobx/error.hpp>
#include <yobx/onnx/payload.hpp>

#include <google/protobuf/arena.h>

#include <cerrno>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#if __has_include(<sys/mman.h>) && __has_include(<fcntl.h>) && __has_include(<unistd.h>)
// ONNX's parser names an enumerator MAP_TYPE, which <sys/mman.h> defines as a macro:
// the parser first (the walk includes it through ONNX's shape inference anyway)
#include <onnx/defs/parser.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define YOBX_ONNX_MMAP 1
#endif

namespace yobx::onnx {

/// A model file read for shape inference: `model()` is the ModelProto with the payloads
/// of its large initializers (those no inference reads: payload_unread) left in the file; `save(path)` writes the model with them
/// put back, byte for byte. Errors are load_model's and save_model's.
class ModelFile {
public:
    /// Reads `path`; a value_error names the file and what is wrong.
    explicit ModelFile(const std::string& path) : path_(path) {
        map(path);
        parse();
    }

    /// A model from bytes in memory (a buffer, a network message), read the same way;
    /// `name` stands for the file in errors.
    static ModelFile from_bytes(std::string bytes, std::string name = "<bytes>") { return ModelFile(std::move(bytes), std::move(name)); }

    /// A model read from bytes it does not copy (a Python `bytes` object, a mapped region):
    /// the payloads left out stay in `bytes`, which must outlive the ModelFile. Only payloads
    /// of at least `left_from` bytes are left out (a caller that copies each one back by hand
    /// leaves out fewer, larger ones).
    static ModelFile view(std::string_view bytes, std::string name = "<bytes>", std::size_t left_from = 1024) {
        return ModelFile(bytes, std::move(name), left_from);
    }

    ModelFile(const ModelFile&) = delete;
    ModelFile& operator=(const ModelFile&) = delete;
    /// Movable: the payloads stay where they are (the mapping, or a buffer on the heap).
    ModelFile(ModelFile&& other) noexcept
        : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
          left_from_(other.left_from_),
#ifdef YOBX_ONNX_MMAP
          mapped_(std::exchange(other.mapped_, nullptr)), fd_(std::exchange(other.fd_, -1)),
#endif
          buffer_(std::move(other.buffer_)), arena_(std::move(other.arena_)), model_(std::exchange(other.model_, nullptr)),
          stripped_(std::move(other.stripped_)) {
    }
    ModelFile& operator=(ModelFile&&) = delete;
    ~ModelFile() { unmap(); }

    /// The model as inference reads and writes it (large payloads left out).
    ::onnx::ModelProto& model() noexcept { return *model_; }
    const ::onnx::ModelProto& model() const noexcept { return *model_; }

    /// Bytes of initializer payloads left in the file (0 when the file was parsed whole).
    std::size_t bytes_left_in_file() const noexcept {
        std::size_t n = 0;
        for (const auto& s : stripped_)
            for (const auto& r : s.payload) n += r.size();
        return n;
    }

    /// The positions, among the graph's initializers, of those whose payloads model() leaves
    /// out (ascending; empty when the file was parsed whole). A caller that holds the model
    /// parsed whole completes model()'s serialization by copying these initializers over.
    std::vector<std::size_t> left_out() const {
        std::vector<std::size_t> v;
        v.reserve(stripped_.size());
        for (const auto& s : stripped_) v.push_back(s.index);
        return v;
    }

    /// The bytes save writes: what protobuf serializes, the payloads put back.
    std::string serialize() const {
        Spliced out;
        splice(path_, out);
        std::string bytes;
        bytes.reserve(out.size);
        for (const auto& p : out.pieces) bytes.append(p);
        return bytes;
    }

    /// Writes the model, payloads put back, to a temporary file beside `path`, then
    /// renames it: no partial file on failure. `path` may be the file that was read.
    void save(const std::string& path) const {
        Spliced out;
        splice(path, out);
        const std::string tmp = path + ".yobx-tmp";
        errno = 0;
        const bool ok = write_pieces(tmp, out.pieces);
        int code = errno;
        std::error_code ec;
        if (ok) std::filesystem::rename(tmp, path, ec);
        if (ok && ec) code = ec.value();
        if (!ok || ec) {
            std::filesystem::remove(tmp, ec);
            throw file_error("cannot write '" + path + "'", path, code != 0 ? code : EIO);
        }
    }

private:
    struct Stripped {
        std::size_t index = 0;  // among the graph's initializers
        std::string name;
        std::vector<std::string_view> payload;  // whole fields (tag included), in the file
    };

    ModelFile(std::string bytes, std::string name) : path_(std::move(name)), buffer_(std::make_unique<std::string>(std::move(bytes))) {
        data_ = buffer_->data();
        size_ = buffer_->size();
        if (size_ > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            throw value_error("'" + path_ + "' is larger than protobuf reads (2 GiB)");
        parse();
    }

    ModelFile(std::string_view bytes, std::string name, std::size_t left_from)
        : path_(std::move(name)), data_(bytes.data()), size_(bytes.size()), left_from_(left_from) {
        if (size_ > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            throw value_error("'" + path_ + "' is larger than protobuf reads (2 GiB)");
        parse();
    }

    void parse() {
        if (size_ == 0 || !light(std::string_view(data_, size_))) {
            stripped_.clear();
            if (size_ == 0 || !model_->ParseFromArray(data_, static_cast<int>(size_))) not_a_model();
        }
        if (!model_->has_graph()) throw value_error("'" + path_ + "' has no graph");
    }

    [[noreturn]] void not_a_model() const {
        throw value_error("'" + path_ + "' is not an ONNX model (the protobuf does not parse: malformed or truncated)");
    }

    void map(const std::string& path) {
        namespace fs = std::filesystem;
        std::error_code ec;
        const fs::file_status kind = fs::status(path, ec);
        if (!fs::is_regular_file(kind))
            throw file_error("cannot open '" + path + "'", path,
                             fs::is_directory(kind)                       ? EISDIR
                             : kind.type() == fs::file_type::not_found ? ENOENT
                             : ec                                    ? ec.value()
                                                                     : EINVAL);  // a device, a pipe
        const auto size = fs::file_size(path, ec);
        if (ec) throw file_error("cannot open '" + path + "'", path, ec.value());
        if (size > static_cast<std::uintmax_t>(std::numeric_limits<int>::max()))
            throw value_error("'" + path + "' is larger than protobuf reads (2 GiB)");
        size_ = static_cast<std::size_t>(size);
        if (size_ == 0) return;
#ifdef YOBX_ONNX_MMAP
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw file_error("cannot open '" + path + "'", path, errno);
        struct stat st {};
        if (::fstat(fd, &st) != 0 || static_cast<std::uintmax_t>(st.st_size) != size) {
            ::close(fd);
            throw value_error("cannot read '" + path + "'");
        }
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ::close(fd);
            throw value_error("cannot read '" + path + "'");
        }
        fd_ = fd;  // kept for save's copy_file_range
        mapped_ = p;
        data_ = static_cast<const char*>(p);
#else
        std::ifstream in(path, std::ios::binary);
        buffer_ = std::make_unique<std::string>(size_, '\0');
        if (!in || !in.read(buffer_->data(), static_cast<std::streamsize>(size_))) throw value_error("cannot read '" + path + "'");
        data_ = buffer_->data();
#endif
    }

#ifdef YOBX_ONNX_MMAP
    /// Writes the pieces to a new file: the large ones that lie in the mapped file are
    /// copied by the kernel from the file read (copy_file_range: no page of them touched
    /// here, and a filesystem with shared extents shares them), the rest written.
    bool write_pieces(const std::string& file, const std::vector<std::string_view>& pieces) const {
        const int out = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (out < 0) return false;
        std::string pending;
        const auto write_all = [&](const char* p, std::size_t n) {
            while (n > 0) {
                const auto w = ::write(out, p, n);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) return false;
                p += w;
                n -= static_cast<std::size_t>(w);
            }
            return true;
        };
        const auto flush = [&] {
            const bool done = write_all(pending.data(), pending.size());
            pending.clear();
            return done;
        };
        bool ok = true, kernel_copy = true;
        for (const auto& piece : pieces) {
            const bool in_file = fd_ >= 0 && piece.data() >= data_ && piece.data() + piece.size() <= data_ + size_;
            if (!in_file || piece.size() < (std::size_t{1} << 16)) {
                pending.append(piece);
                if (pending.size() >= (std::size_t{1} << 20)) ok = ok && flush();
                continue;
            }
            ok = ok && flush();
            std::size_t done = 0;
#ifdef __linux__
            auto offset = static_cast<off_t>(piece.data() - data_);
            while (ok && kernel_copy && done < piece.size()) {
                const auto c = ::copy_file_range(fd_, &offset, out, nullptr, piece.size() - done, 0);
                if (c < 0 && errno == EINTR) continue;
                if (c <= 0) kernel_copy = done == 0 && c < 0 ? false : (ok = false);  // not supported here: write it
                else done += static_cast<std::size_t>(c);
            }
#endif
            ok = ok && write_all(piece.data() + done, piece.size() - done);
        }
        ok = ok && flush();
        return (::close(out) == 0) && ok;
    }
#else
    bool write_pieces(const std::string& file, const std::vector<std::string_view>& pieces) const {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        for (const auto& p : pieces) out.write(p.data(), static_cast<std::streamsize>(p.size()));
        out.close();
        return static_cast<bool>(out);
    }
#endif

    void unmap() noexcept {
#ifdef YOBX_ONNX_MMAP
        if (mapped_) ::munmap(mapped_, size_);
        if (fd_ >= 0) ::close(fd_);
#endif
    }

    /// The wire-level pass: parses the file with the large payloads of the graph's
    /// initializers left out. False when it does not follow the file (parsed whole then).
    bool light(std::string_view file) {
        using namespace detail::wire;
        std::string bytes;
        bytes.reserve(1 << 16);
        const bool followed = model_fields(
            file, [&](const Field& f) { bytes.append(f.begin, f.end); },
            [&](const Field& f) {
                std::string graph;
                if (!light_graph(f.data, f.end, graph)) return false;
                put_bytes(bytes, model_graph, graph);
                return true;
            });
        if (!followed || stripped_.empty()) return false;  // nothing saved: protobuf reads the file itself
        return model_->ParseFromString(bytes);
    }

    bool light_graph(const char* p, const char* end, std::string& out) {
        using namespace detail::wire;
        Field f;
        std::size_t index = 0;
        while (p < end) {
            if (!next_field(p, end, f)) return false;
            if (f.number != 5 || f.type != wire_bytes) {  // GraphProto.initializer
                out.append(f.begin, f.end);
                continue;
            }
            Stripped s;
            s.index = index++;
            const auto strip = light_tensor(f.data, f.end, s);
            if (!strip) return false;
            if (!*strip) {
                out.append(f.begin, f.end);
                continue;
            }
            put_bytes(out, 5, tensor_);
            stripped_.push_back(std::move(s));
        }
        return true;
    }

    /// Whether the tensor's payload is left out (then `tensor_` holds the rest of its fields,
    /// and `s` its name and payload); nullopt when the pass does not follow the tensor.
    std::optional<bool> light_tensor(const char* p, const char* end, Stripped& s) {
        using namespace detail::wire;
        std::vector<Field>& fields = fields_;  // kept from tensor to tensor: no allocation each
        fields.clear();
        TensorFields t;
        if (!scan_tensor(p, end, t, [&](const Field& f) { fields.push_back(f); })) return std::nullopt;
        const bool unread = payload_unread(static_cast<int>(t.data_type), t.rank, t.count);
        if (!t.valid_dims || !unread || t.payload < left_from_) return false;
        s.name.assign(t.name);
        tensor_.clear();
        for (const auto& x : fields) {
            if (payload_element(x.number) >= 0) s.payload.emplace_back(x.begin, static_cast<std::size_t>(x.end - x.begin));
            else tensor_.append(x.begin, x.end);
        }
        return true;
    }

    /// What save writes, in pieces: what protobuf serializes, with each left-out payload
    /// appended to its tensor (where a field sits in a message does not change it).
    struct Spliced {
        std::string light;
        std::deque<std::string> owned;  // lengths written anew; a deque keeps their addresses
        std::vector<std::string_view> pieces;
        std::size_t size = 0;
    };
    /// Fills `out` in place: its pieces point into its own strings.
    void splice(const std::string& path, Spliced& out) const {
        if (!model_->SerializeToString(&out.light)) throw value_error("cannot write '" + path + "': the model does not serialize");
        splice_into(path, out.light, out.pieces, out.owned);
        for (const auto& p : out.pieces) out.size += p.size();
    }

    void splice_into(const std::string& path, const std::string& light, std::vector<std::string_view>& pieces, std::deque<std::string>& owned) const {
        using namespace detail::wire;
        if (stripped_.empty()) {
            pieces.emplace_back(light);
            return;
        }
        const char* p = light.data();
        const char* const end = p + light.size();
        Field f;
        bool done = false;
        while (p < end) {
            if (!next_field(p, end, f)) throw std::logic_error("yobx: the serialized model does not scan");
            if (f.number != model_graph || f.type != wire_bytes) {
                pieces.emplace_back(f.begin, static_cast<std::size_t>(f.end - f.begin));
                continue;
            }
            std::vector<std::string_view> graph;
            std::size_t graph_size = 0, index = 0;
            auto next = stripped_.begin();
            const auto add = [&](std::string_view v) {
                graph.push_back(v);
                graph_size += v.size();
            };
            for (const char* q = f.data; q < f.end;) {
                Field g;
                if (!next_field(q, f.end, g)) throw std::logic_error("yobx: the serialized graph does not scan");
                if (g.number != 5 || g.type != wire_bytes || next == stripped_.end() || index++ != next->index) {
                    add(std::string_view(g.begin, static_cast<std::size_t>(g.end - g.begin)));
                    continue;
                }
                if (const auto now = name_of(g); now != next->name) changed(path, *next, "'" + now + "'");
                std::size_t size = static_cast<std::size_t>(g.end - g.data);
                for (const auto& r : next->payload) size += r.size();
                auto& head = owned.emplace_back();
                put_head(head, 5, size);
                add(head);
                add(std::string_view(g.data, static_cast<std::size_t>(g.end - g.data)));
                for (const auto& r : next->payload) add(r);
                ++next;
            }
            if (next != stripped_.end()) changed(path, *next, "none");
            auto& head = owned.emplace_back();
            put_head(head, model_graph, graph_size);
            pieces.emplace_back(head);
            pieces.insert(pieces.end(), graph.begin(), graph.end());
            done = true;
        }
        if (!done) throw std::logic_error("yobx: the serialized model has no graph");
    }

    /// The name of a serialized TensorProto (its last name field, as protobuf reads it).
    static std::string name_of(const detail::wire::Field& tensor) {
        std::string name;
        detail::wire::Field f;
        for (const char* p = tensor.data; detail::wire::next_field(p, tensor.end, f);)
            if (f.number == detail::wire::tensor_name && f.type == detail::wire::wire_bytes) name.assign(f.data, f.end);
        return name;
    }

    [[noreturn]] static void changed(const std::string& path, const Stripped& was, const std::string& now) {
        throw value_error("cannot save '" + path + "': the graph's initializers were added, removed or reordered after it was read (initializer " +
                          std::to_string(was.index) + " was '" + was.name + "', now " + now +
                          "); ModelFile keeps their large payloads in the file and puts them back by position");
    }

    static google::protobuf::ArenaOptions arena_options() {
        google::protobuf::ArenaOptions o;
        o.start_block_size = std::size_t{1} << 16;
        o.max_block_size = std::size_t{1} << 22;
        return o;
    }

    std::string path_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t left_from_ = 1024;  // a payload is left in the file from this size
#ifdef YOBX_ONNX_MMAP
    void* mapped_ = nullptr;
    int fd_ = -1;
#endif
    std::unique_ptr<std::string> buffer_;  // the bytes when not mapped (on the heap: a move keeps them in place)
    // The model lives on an arena: parsed without a heap allocation per message and string, and
    // freed at once (a 96-layer decoder's 8,000 nodes took a quarter of a run to free one by one).
    std::unique_ptr<google::protobuf::Arena> arena_ = std::make_unique<google::protobuf::Arena>(arena_options());
    ::onnx::ModelProto* model_ = google::protobuf::Arena::CreateMessage<::onnx::ModelProto>(arena_.get());
    std::vector<Stripped> stripped_;
    // the light pass's scratch, reused from one initializer to the next: a tensor's fields, and
    // the fields of one whose payload is left out
    std::vector<detail::wire::Field> fields_;
    std::string tensor_;
};

}  // namespace yobx::onnx
