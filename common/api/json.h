/// @file json.h
/// @brief The one JSON string writer of the host code (the registry's listing,
///        the GPU sweep's tally).
#pragma once

#include <string>

namespace fp8gemm {

/// `text` as a JSON string: quoted, with quotes and backslashes escaped, a
/// newline as \\n and every other control character as \\u00XX.
inline std::string json_string(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (byte < 0x20) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace fp8gemm
