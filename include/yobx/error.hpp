// yobx/error.hpp — the exceptions every part of yobx throws.
//
// All errors derive from yobx::error (a std::runtime_error). The subclasses
// mirror the Python exception the seeds name, so a caller can tell them apart:
// RuntimeError -> runtime_error, ValueError -> value_error,
// NotImplementedError -> not_implemented_error, TypeError -> type_error.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace yobx {

/// Base of every exception thrown by yobx.
///   try { ... } catch (const yobx::error& e) { std::cerr << e.what(); }
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Python's RuntimeError: the inputs are well-formed but the operation cannot proceed.
class runtime_error : public error {
public:
    using error::error;
};

/// Python's ValueError: an argument has the right type but a wrong value.
class value_error : public error {
public:
    using error::error;
};

/// A file that cannot be opened, read or written: a value_error to C++ callers (its message
/// as before, "cannot open 'x.onnx'"), Python's OSError to Python ones, FileNotFoundError,
/// PermissionError or IsADirectoryError by its errno, with the path as `filename`.
///   catch (const yobx::file_error& e) { e.code() == ENOENT; e.path() == "x.onnx"; }
class file_error : public value_error {
public:
    file_error(const std::string& message, std::string path, int code) : value_error(message), path_(std::move(path)), code_(code) {}
    const std::string& path() const noexcept { return path_; }
    int code() const noexcept { return code_; }

private:
    std::string path_;
    int code_ = 0;
};

/// Python's NotImplementedError: a case the library knowingly does not handle.
class not_implemented_error : public error {
public:
    using error::error;
};

/// Python's TypeError: a value has the wrong kind (a list where a tensor was expected...).
class type_error : public error {
public:
    using error::error;
};

/// An error's message on one line, as yobx-onnx-shapes prints it and Python raises it: a
/// message quotes the model's names, which may hold any byte, so each control character
/// becomes its escape (`\n`, `\r`, `\t`, `\x01`, as Python's repr writes them).
///   one_line("node 'a\nb'") == "node 'a\\nb'"
inline std::string one_line(std::string_view message) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(message.size());
    for (const char ch : message) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

}  // namespace yobx
