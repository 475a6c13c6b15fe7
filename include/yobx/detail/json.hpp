// yobx/detail/json.hpp — yobx's one JSON component: a strict parser, typed access with JSON
// paths in errors (Reader), and a writer (Writer) that every report and spec writes with.
//
// yobx stores TreeSpecs, export specs and reports as JSON. The core
// headers may only depend on the standard library and Boost headers, and
// Boost.JSON is not header-only without a separately compiled source, so this
// reader is written here: RFC 8259 grammar, no extensions, a nesting limit, and
// an exception with the byte offset for every malformed input, never UB.
#pragma once

#include <yobx/error.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/detail/utf8.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx::detail::json {

/// A parsed JSON value. Objects keep their members in document order.
struct Node {
    enum class Kind { null, boolean, integer, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    std::int64_t integer = 0;  // an integer literal (no fraction, no exponent) that fits int64
    double number = 0;         // any other number
    std::string string;
    std::vector<Node> array;        // an array's items, or an object's member values
    std::vector<std::string> keys;  // an object's member names, in document order

    /// The member named key, or nullptr.
    template <class = void>
    const Node* find(std::string_view key) const {
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == key) return &array[i];
        return nullptr;
    }
};

template <class = void>
inline std::string_view kind_name(Node::Kind k) {
    switch (k) {
        case Node::Kind::null: return "null";
        case Node::Kind::boolean: return "a boolean";
        case Node::Kind::integer: return "an integer";
        case Node::Kind::number: return "a number";
        case Node::Kind::string: return "a string";
        case Node::Kind::array: return "an array";
        case Node::Kind::object: return "an object";
    }
    return "?";
}

/// Recursive-descent parser. `who` prefixes every error message (e.g. "TreeSpec.from_json").
class Parser {
public:
    static constexpr int max_depth = 512;

    Parser(std::string_view text, std::string who) : s_(text), who_(std::move(who)) {}

    template <class = void>
    Node parse() {
        skip_ws();
        Node n = value(0);
        skip_ws();
        if (i_ != s_.size()) fail("unexpected trailing character " + describe_char());
        return n;
    }

private:
    template <class = void>
    [[noreturn]] void fail(const std::string& why) const {
        throw value_error(who_ + ": malformed JSON at offset " + std::to_string(i_) + ": " + why);
    }

    template <class = void>
    std::string describe_char() const {
        if (i_ >= s_.size()) return "end of input";
        const unsigned char c = static_cast<unsigned char>(s_[i_]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        static constexpr char hex[] = "0123456789abcdef";
        return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }

    template <class = void>
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }

    template <class = void>
    void expect_word(std::string_view w) {
        if (s_.substr(i_, w.size()) != w) fail("expected '" + std::string(w) + "'");
        i_ += w.size();
    }

    template <class = void>
    Node value(int depth) {
        if (depth > max_depth) fail("nesting deeper than " + std::to_string(max_depth) + " levels");
        if (i_ >= s_.size()) fail("expected a value, got end of input");
        Node n;
        switch (s_[i_]) {
            case 'n': expect_word("null"); return n;
            case 't': expect_word("true"); n.kind = Node::Kind::boolean; n.boolean = true; return n;
            case 'f': expect_word("false"); n.kind = Node::Kind::boolean; return n;
            case '"': n.kind = Node::Kind::string; n.string = string(); return n;
            case '[': return array(depth);
            case '{': return object(depth);
            default:
                if (s_[i_] == '-' || (s_[i_] >= '0' && s_[i_] <= '9')) return number();
                fail("expected a value, got " + describe_char());
        }
    }

    template <class = void>
    Node array(int depth) {
        Node n;
        n.kind = Node::Kind::array;
        ++i_;
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ']') { ++i_; return n; }
        for (;;) {
            skip_ws();
            n.array.push_back(value(depth + 1));
            skip_ws();
            if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
            if (i_ < s_.size() && s_[i_] == ']') { ++i_; return n; }
            fail("expected ',' or ']' in an array, got " + describe_char());
        }
    }

    template <class = void>
    Node object(int depth) {
        Node n;
        n.kind = Node::Kind::object;
        ++i_;
        skip_ws();
        if (i_ < s_.size() && s_[i_] == '}') { ++i_; return n; }
        for (;;) {
            skip_ws();
            if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key in an object, got " + describe_char());
            const std::size_t key_at = i_;
            std::string key = string();
            if (n.find(key)) { i_ = key_at; fail("duplicate key \"" + key + "\""); }
            skip_ws();
            if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after an object key, got " + describe_char());
            ++i_;
            skip_ws();
            n.array.push_back(value(depth + 1));
            n.keys.push_back(std::move(key));
            skip_ws();
            if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
            if (i_ < s_.size() && s_[i_] == '}') { ++i_; return n; }
            fail("expected ',' or '}' in an object, got " + describe_char());
        }
    }

    template <class = void>
    unsigned hex4() {
        if (s_.size() - i_ < 4) fail("truncated \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[i_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else { --i_; fail("invalid hex digit in a \\u escape"); }
        }
        return v;
    }

    template <class = void>
    static void put_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) out += static_cast<char>(cp);
        else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    template <class = void>
    std::string string() {
        ++i_;  // opening quote
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const char c = s_[i_];
            if (c == '"') { ++i_; return out; }
            if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in a string");
            if (c != '\\') { out += c; ++i_; continue; }
            ++i_;
            if (i_ >= s_.size()) fail("unterminated escape");
            const char e = s_[i_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xDC80 && cp <= 0xDCFF) {  // a byte that is not UTF-8, as write_string escapes it
                        out += static_cast<char>(cp - 0xDC00);
                        break;
                    }
                    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired low surrogate in a \\u escape");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (s_.substr(i_, 2) != "\\u") fail("unpaired high surrogate in a \\u escape");
                        i_ += 2;
                        const unsigned lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid low surrogate in a \\u escape");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: i_ -= 2; fail("invalid escape '\\" + std::string(1, e) + "'");
            }
        }
    }

    template <class = void>
    Node number() {
        const std::size_t start = i_;
        bool integral = true;
        if (s_[i_] == '-') ++i_;
        auto digits = [&] {
            const std::size_t d0 = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
            return i_ - d0;
        };
        if (i_ < s_.size() && s_[i_] == '0') ++i_;
        else if (digits() == 0) fail("expected a digit");
        if (i_ < s_.size() && s_[i_] == '.') {
            integral = false;
            ++i_;
            if (digits() == 0) fail("expected a digit after '.'");
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            integral = false;
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (digits() == 0) fail("expected a digit in the exponent");
        }
        const char* b = s_.data() + start;
        const char* e = s_.data() + i_;
        Node n;
        if (integral) {
            n.kind = Node::Kind::integer;
            auto [p, ec] = std::from_chars(b, e, n.integer);
            if (ec != std::errc() || p != e) { i_ = start; fail("integer " + std::string(b, e) + " does not fit in int64"); }
        } else {
            n.kind = Node::Kind::number;
            auto [p, ec] = std::from_chars(b, e, n.number);
            if (ec != std::errc() || p != e) { i_ = start; fail("number " + std::string(b, e) + " is out of the range of double"); }
        }
        return n;
    }

    std::string_view s_;
    std::string who_;
    std::size_t i_ = 0;
};

/// Typed access to a parsed document, each error naming `who`, the JSON path and what was
/// expected (a reader of a report or spec derives from it, adding its own kinds):
///   Reader rd("ExportSpec.from_json");
///   rd.need(doc, "$", "num_calls", Node::Kind::integer);
///   // value_error "ExportSpec.from_json: $.num_calls: expected an integer, got a string"
class Reader {
public:
    explicit Reader(std::string who) : who_(std::move(who)) {}

    [[noreturn]] void fail(const std::string& at, const std::string& why) const { throw value_error(who_ + ": " + at + ": " + why); }
    [[noreturn]] void wrong(const std::string& at, std::string_view expected, const Node& got) const {
        fail(at, "expected " + std::string(expected) + ", got " + std::string(kind_name(got.kind)));
    }
    void object(const Node& n, const std::string& at) const {
        if (n.kind != Node::Kind::object) wrong(at, "an object", n);
    }
    /// f(element, its path) for each element of the array n at `at`, each required to be an object.
    template <class F>
    void each_object(const Node& n, const std::string& at, F f) const {
        for (std::size_t i = 0; i < n.array.size(); ++i) {
            const std::string eat = at + "[" + std::to_string(i) + "]";
            object(n.array[i], eat);
            f(n.array[i], eat);
        }
    }
    /// The member `key` of the object n at `at`, of any kind.
    const Node& need_any(const Node& n, const std::string& at, std::string_view key) const {
        const Node* m = n.find(key);
        if (!m) fail(at, "missing member \"" + std::string(key) + "\"");
        return *m;
    }
    /// The member `key` of the object n at `at`, of the kind given.
    const Node& need(const Node& n, const std::string& at, std::string_view key, Node::Kind kind) const {
        const Node& m = need_any(n, at, key);
        if (m.kind != kind) wrong(at + "." + std::string(key), kind_name(kind), m);
        return m;
    }
    std::int64_t non_negative_value(std::int64_t v, const std::string& at) const {
        if (v < 0) fail(at, "expected a non-negative integer, got " + std::to_string(v));
        return v;
    }
    std::int64_t non_negative(const Node& n, const std::string& at) const { return non_negative_value(n.integer, at); }
    std::vector<std::int64_t> ints(const Node& n, const std::string& at) const {
        if (n.kind != Node::Kind::array) wrong(at, "an array of integers", n);
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < n.array.size(); ++i) {
            if (n.array[i].kind != Node::Kind::integer) wrong(at + "[" + std::to_string(i) + "]", "an integer", n.array[i]);
            out.push_back(n.array[i].integer);
        }
        return out;
    }
    /// Indices (of calls): non-negative integers.
    std::vector<std::size_t> indices(const Node& n, const std::string& at) const {
        std::vector<std::size_t> out;
        for (auto c : ints(n, at)) out.push_back(static_cast<std::size_t>(non_negative_value(c, at)));
        return out;
    }
    /// The items of the array n, each required to be a string.
    std::vector<std::string> strings(const Node& n, const std::string& at) const {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < n.array.size(); ++i) {
            if (n.array[i].kind != Node::Kind::string) wrong(at + "[" + std::to_string(i) + "]", "a string", n.array[i]);
            out.push_back(n.array[i].string);
        }
        return out;
    }

private:
    std::string who_;
};

/// Appends s as a JSON string literal (quotes and escapes included). JSON text is UTF-8: a
/// byte of s that starts no well-formed UTF-8 sequence (an ONNX name may hold any bytes) is
/// written as the lone surrogate \udcXX that stands for byte XX, as Python's "surrogateescape"
/// decoding gives it (`name.encode("utf-8", "surrogateescape")` is the bytes again), and
/// the reader above reads it back as that byte: nothing is lost.
template <class = void>
inline void write_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    // most strings (keys, names, expressions) need no escape: appended whole
    std::size_t plain = 0;
    while (plain < s.size()) {
        const auto c = static_cast<unsigned char>(s[plain]);
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
        ++plain;
    }
    out.append(s.data(), plain);
    s.remove_prefix(plain);
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const std::size_t n = utf8::sequence_length(s, i);
            if (n == 0) {
                out += "\\udc";
                out += hex[c >> 4];
                out += hex[c & 15];
                ++i;
            } else {
                out.append(s, i, n);
                i += n;
            }
            continue;
        }
        ++i;
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
}

/// Writes JSON into a string, containers opened and closed in order: separators, quotes and
/// escapes (write_string) are its business, the caller's only the order of members. A container
/// is `one_line` (`{"a": 1, "b": [2, 3]}`) or `lines` (each member on a line of its own, indented
/// one level past the container's; an empty one `{}`), so that a report reads as a person wants
/// it and every report writes its JSON the same way.
///
///   std::string s;
///   Writer w(s);
///   w.begin_object(Writer::lines).member("nodes", 3).key("ops").begin_array().value("Add").end().end();
///   // {\n  "nodes": 3,\n  "ops": ["Add"]\n}
class Writer {
public:
    enum Layout { one_line, lines };

    /// Appends to `out`; a container of `lines` indents its members by `base` and two spaces a level.
    explicit Writer(std::string& out, std::string_view base = "") : out_(out), base_(base) {}

    Writer& begin_object(Layout layout = one_line) { return open('{', layout); }
    Writer& begin_array(Layout layout = one_line) { return open('[', layout); }
    /// Closes the innermost container.
    Writer& end() {
        if (frames_.empty()) throw std::logic_error("json::Writer::end: no container is open");
        const Frame f = frames_.back();
        frames_.pop_back();
        if (f.layout == lines && f.count > 0) newline(frames_.size());
        out_ += f.close;
        return *this;
    }

    /// The next member's name (in an object).
    Writer& key(std::string_view k) {
        separate();
        write_string(out_, k);
        out_ += ": ";
        after_key_ = true;
        return *this;
    }

    Writer& value(std::string_view v) { return raw_then([&] { write_string(out_, v); }); }
    Writer& value(const char* v) { return value(std::string_view(v)); }
    Writer& value(const std::string& v) { return value(std::string_view(v)); }
    Writer& value(bool v) { return raw(v ? "true" : "false"); }
    template <class I>
        requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
    Writer& value(I v) {
        return raw_then([&] { out_ += std::to_string(v); });
    }
    Writer& null() { return raw("null"); }
    /// An optional value: null when empty.
    template <class T>
    Writer& value(const std::optional<T>& v) {
        return v ? value(*v) : null();
    }
    /// A value already written as JSON (a number formatted by the caller).
    Writer& raw(std::string_view json) {
        return raw_then([&] { out_ += json; });
    }

    /// A one-line array of the values of `items`.
    template <class Range>
    Writer& array(const Range& items) {
        begin_array();
        for (const auto& x : items) value(x);
        return end();
    }

    /// key(k) then value(v).
    template <class T>
    Writer& member(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

    /// The depth of the containers open.
    std::size_t depth() const noexcept { return frames_.size(); }

private:
    struct Frame {
        char close;
        Layout layout;
        std::size_t count;
    };

    Writer& open(char bracket, Layout layout) {
        separate();
        out_ += bracket;
        frames_.push_back(Frame{bracket == '{' ? '}' : ']', layout, 0});
        return *this;
    }
    template <class F>
    Writer& raw_then(F write) {
        separate();
        write();
        return *this;
    }
    // before a key, or a value that no key precedes: the separator from the previous member
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (frames_.empty()) return;
        Frame& f = frames_.back();
        if (f.layout == lines) {
            if (f.count > 0) out_ += ',';
            newline(frames_.size());
        } else if (f.count > 0) {
            out_ += ", ";
        }
        ++f.count;
    }
    void newline(std::size_t level) {
        out_ += '\n';
        out_ += base_;
        for (std::size_t i = 0; i < level; ++i) out_ += "  ";
    }

    std::string& out_;
    std::string base_;
    std::vector<Frame> frames_;
    bool after_key_ = false;
};

}  // namespace yobx::detail::json
