// A model written in ONNX's text format (onnx/defs/parser.h), which reads any opset: the ONNX
// tests' way of stating a small graph.
#pragma once

#include <doctest/doctest.h>
#include <onnx/defs/parser.h>

#include <string>

namespace onnx_test {

/// The model of `text`; a text the parser refuses fails the test with the parser's message.
inline ::onnx::ModelProto model_of_text(const std::string& text) {
    ::onnx::ModelProto model;
    const auto status = ::onnx::OnnxParser::Parse(model, text.c_str());
    REQUIRE_MESSAGE(status.IsOK(), status.ErrorMessage());
    return model;
}

}  // namespace onnx_test
