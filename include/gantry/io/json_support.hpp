// What the gantry JSON readers and writers share: parsing text into nlohmann::json with errors
// that name the file, line and column; checked field access whose errors name the JSON pointer
// of the bad value (for example "/vertices/3/compute"); and a writer layout with one array
// element per line, so large files stay readable and diff well.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/io/document_schema.hpp>
#include <gantry/io/limits.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gantry::detail {

// "line 3, column 14 (byte offset 41)" for a 0-based byte offset into text.
inline std::string describe_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) + " (byte offset " +
         std::to_string(offset) + ")";
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 5: " prefix, which would repeat the position.
inline std::string strip_json_exception_prefix(std::string_view message) {
  if (const auto bracket = message.find("] "); bracket != std::string_view::npos && message.front() == '[')
    message.remove_prefix(bracket + 2);
  if (message.starts_with("parse error")) {
    if (const auto colon = message.find(": "); colon != std::string_view::npos) message.remove_prefix(colon + 2);
  }
  return std::string(message);
}

// Throws parse_error when arrays and objects in `text` nest deeper than `max_nesting`, naming the
// position of the first bracket too deep. One pass over the bytes with no recursion, so it runs
// before anything recursive (nlohmann's dump, copy and comparison) sees the value. Brackets in
// strings and comments do not count; syntax errors are left to the parser.
inline void check_json_nesting(std::string_view text, std::string_view source, std::size_t max_nesting) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > max_nesting)
        throw parse_error(std::string(source) + ": " + describe_position(text, i) +
                          ": arrays and objects nest deeper than " + std::to_string(max_nesting) +
                          " levels (the limit, read_limits::max_nesting)");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// Parses JSON text. Comments (// and /* */) are allowed, as hand-written files use them. Throws
// parse_error naming `source`, the line, column and byte offset, and the reason.
inline nlohmann::json parse_json_text(std::string_view text, std::string_view source,
                                      std::size_t max_nesting = read_limits{}.max_nesting) {
  check_json_nesting(text, source, max_nesting);
  try {
    return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                                 /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;  // nlohmann counts from 1
    throw parse_error(std::string(source) + ": " + describe_position(text, offset) +
                      ": JSON syntax error: " + escaped(strip_json_exception_prefix(e.what()), '\0', 200));
  } catch (const nlohmann::json::exception& e) {
    // A number too large for a double ("1e999") is reported without a position: find the token.
    std::string reason = strip_json_exception_prefix(e.what());
    std::string where;
    if (const auto open = reason.find('\''), close = reason.rfind('\'');
        open != std::string::npos && close > open + 1) {
      if (const auto at = text.find(reason.substr(open + 1, close - open - 1)); at != std::string_view::npos)
        where = describe_position(text, at) + ": ";
    }
    throw parse_error(std::string(source) + ": " + where + "invalid JSON: " + escaped(reason, '\0', 200));
  }
}

// A JSON pointer (RFC 6901) extended by one key or index.
inline std::string pointer_to(const std::string& base, std::string_view key) {
  std::string out = base + "/";
  for (const char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}
inline std::string pointer_to(const std::string& base, std::size_t index) { return base + "/" + std::to_string(index); }

// Appends compact JSON for `value` to `out`, stopping once `out` holds `limit` characters: a
// message never pays for, or recurses through, more of a value than it shows (each level appends
// a bracket first, so the recursion is at most `limit` deep).
inline void append_json_prefix(const nlohmann::json& value, std::string& out, std::size_t limit) {
  if (out.size() >= limit) return;
  if (value.is_array() || value.is_object()) {
    const bool array = value.is_array();
    out += array ? '[' : '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() < limit; ++it) {
      if (!first) out += ',';
      first = false;
      if (!array) {
        append_json_prefix(nlohmann::json(it.key().substr(0, limit)), out, limit);
        out += ':';
      }
      append_json_prefix(*it, out, limit);
    }
    out += array ? ']' : '}';
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    out += nlohmann::json(text.substr(0, limit)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    out += value.dump();
  }
}

// A value for a message: strings quoted, long values cut short.
inline std::string describe_json(const nlohmann::json& value) {
  if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "infinity" : "-infinity";
  }
  std::string text;
  append_json_prefix(value, text, 61);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* kind = value.is_string()    ? "string "
                     : value.is_number()  ? "number "
                     : value.is_boolean() ? "boolean "
                     : value.is_array()   ? "array "
                     : value.is_object()  ? "object "
                                          : "";
  return kind + text;
}

// Reads fields of one document; every error names the source and the JSON pointer of the value.
// `base` is the pointer of the document inside its file, for documents embedded in another
// (a placement file's "/cluster").
class json_reader {
 public:
  explicit json_reader(std::string source, std::string base = {})
      : source_(std::move(source)), base_(std::move(base)) {}

  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    const std::string where = base_ + pointer;
    throw parse_error(source_ + ": " + (where.empty() ? std::string("(document)") : where) + ": " + reason);
  }

  const nlohmann::json& object(const nlohmann::json& value, const std::string& pointer) const {
    if (!value.is_object()) fail(pointer, "expected an object, got " + describe_json(value));
    return value;
  }
  const nlohmann::json& array(const nlohmann::json& value, const std::string& pointer) const {
    if (!value.is_array()) fail(pointer, "expected an array, got " + describe_json(value));
    return value;
  }

  // The member `key` of the object at `pointer`, or nullptr when absent. A null value counts as
  // absent, so writers of other tools may emit null for "not set".
  static const nlohmann::json* find(const nlohmann::json& object, std::string_view key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  const nlohmann::json& require(const nlohmann::json& object, std::string_view key, const std::string& pointer) const {
    const auto* value = find(object, key);
    if (value == nullptr) fail(pointer, "missing field \"" + std::string(key) + "\"");
    return *value;
  }

  std::string string(const nlohmann::json& value, const std::string& pointer) const {
    if (!value.is_string()) fail(pointer, "expected a string, got " + describe_json(value));
    return value.get<std::string>();
  }
  std::string name(const nlohmann::json& value, const std::string& pointer) const {
    std::string text = string(value, pointer);
    if (text.empty()) fail(pointer, "a name cannot be empty");
    return text;
  }

  double number(const nlohmann::json& value, const std::string& pointer) const {
    if (!value.is_number()) fail(pointer, "expected a number, got " + describe_json(value));
    return value.get<double>();
  }

  // A non-negative whole number of bytes, or a size string such as "16GiB".
  byte_count bytes(const nlohmann::json& value, const std::string& pointer) const {
    if (value.is_number_unsigned()) return value.get<byte_count>();
    if (value.is_number_integer()) {
      const auto x = value.get<std::int64_t>();
      if (x < 0) fail(pointer, "a byte count must be a non-negative integer, got " + std::to_string(x));
      return static_cast<byte_count>(x);
    }
    if (value.is_number_float()) {
      const double x = value.get<double>();
      // Written as 1e9 or 4096.0: accepted when it is a whole number that fits in 64 bits.
      if (std::isfinite(x) && x >= 0 && x == std::floor(x) && x < 18446744073709551616.0)
        return static_cast<byte_count>(x);
      fail(pointer, "a byte count must be a non-negative integer, got " + describe_json(value));
    }
    if (value.is_string()) {
      try {
        return parse_bytes(value.get<std::string>());
      } catch (const invalid_input& e) {
        fail(pointer, e.what());
      }
    }
    fail(pointer, "expected a byte count (an integer or a size such as \"16GiB\"), got " + describe_json(value));
  }

  // A finite time in seconds >= 0: a number, or a duration string such as "1.2ms".
  seconds time(const nlohmann::json& value, const std::string& pointer, std::string_view what) const {
    if (value.is_string()) {
      try {
        return parse_duration(value.get<std::string>());
      } catch (const invalid_input& e) {
        fail(pointer, e.what());
      }
    }
    if (!value.is_number())
      fail(pointer, "expected a " + std::string(what) + " in seconds, got " + describe_json(value));
    const double x = value.get<double>();
    if (!std::isfinite(x) || x < 0)
      fail(pointer, std::string(what) + " must be a finite number of seconds >= 0, got " + describe_json(value));
    return x;
  }

  // Refuses a member of the object at `pointer` whose key is not one of `known` (a range of
  // string-like keys). One policy for every gantry document: a misspelt field ("outputs" for
  // "output") is an error naming the key, never dropped while the value it meant to set keeps its
  // default. `what` names the object ("a vertex"); free-form data has its place under /metadata.
  // `known` lists keys (string-like) or the members of a table (document_member).
  template <class Keys>
  void only_known_keys(const nlohmann::json& value, const std::string& pointer, const Keys& known,
                       std::string_view what) const {
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string& key = it.key();
      bool found = false;
      for (const auto& k : known) found = found || key_of(k) == key;
      if (found) continue;
      std::string list;
      std::vector<std::string_view> names;
      for (const auto& k : known) {
        names.push_back(key_of(k));
        list += (list.empty() ? "" : ", ") + std::string(names.back());
      }
      const std::string nearest = nearest_name(key, names);  // within half the key's length
      fail(pointer_to(pointer, key),
           "unknown field" + (nearest.empty() ? std::string() : " (did you mean \"" + nearest + "\"?)") + "; " +
               std::string(what) + " has " + list + "; free-form data belongs under /metadata");
    }
  }

  // Checks the object at `pointer` against its table (io/document_schema.hpp), the one policy of
  // every gantry document: a key the table does not list is refused (only_known_keys), then, in
  // the table's order, a required member that is missing (or null) and an object or list member of
  // another JSON type. Returns the object; the reader then reads each value with its type.
  const nlohmann::json& check_members(const nlohmann::json& value, const std::string& pointer,
                                      const document_object& table) const {
    object(value, pointer);
    only_known_keys(value, pointer, table.members, table.what);
    for (const document_member& m : table.members) {
      const nlohmann::json* member = find(value, m.key);
      if (member == nullptr) {
        if (m.required) (void)require(value, m.key, pointer);
      } else if (m.type == member_type::object) {
        object(*member, pointer_to(pointer, m.key));
      } else if (m.type == member_type::list) {
        array(*member, pointer_to(pointer, m.key));
      }
    }
    return value;
  }

  // Checks "format" and "version" of a gantry document.
  void header(const nlohmann::json& root, std::string_view format, int version) const {
    object(root, "");
    const auto& written_format = require(root, "format", "");
    if (!written_format.is_string() || written_format.get<std::string>() != format)
      fail("/format", "expected \"" + std::string(format) + "\", got " + describe_json(written_format) +
                          " (this is not a " + std::string(format) + " file)");
    const auto& written_version = require(root, "version", "");
    if (!written_version.is_number_integer() && !written_version.is_number_unsigned())
      fail("/version", "expected an integer, got " + describe_json(written_version));
    if (written_version.get<std::int64_t>() != version)
      fail("/version", "unsupported version " + written_version.dump() + " (this reader reads version " +
                           std::to_string(version) + ")");
  }

 private:
  static std::string_view key_of(std::string_view key) noexcept { return key; }
  static std::string_view key_of(const document_member& member) noexcept { return member.key; }

  std::string source_, base_;
};

// Serialises a value; strings must be valid UTF-8 (throws invalid_input otherwise).
inline std::string dump_json(const nlohmann::ordered_json& value, std::string_view what) {
  try {
    return value.dump();
  } catch (const nlohmann::json::type_error& e) {
    throw invalid_input(std::string(what) + ": " + strip_json_exception_prefix(e.what()) +
                        " (names and strings must be valid UTF-8)");
  }
}

// Appends element i of a document array whose current line is `line` characters long: after the
// one before on the same line where the array is plain (no objects or arrays in it) and the line
// stays within about 100 characters, else on a line of its own.
inline void append_array_element(std::string& out, std::size_t& line, std::size_t i, std::string_view element,
                                 bool plain) {
  if (i > 0) {
    if (plain && line + element.size() + 2 <= 100) {
      out += ", ";
      line += 2;
    } else {
      out += ",\n    ";
      line = 0;
    }
  }
  out += element;
  line += element.size();
}

// The layout of every gantry document: top-level members one per line; arrays of objects or
// arrays with one element per line, each element compact; arrays of plain values (names)
// packed into lines of about 100 characters.
inline std::string document_text(const nlohmann::ordered_json& document, std::string_view what) {
  std::string out = "{\n";
  bool first_member = true;
  for (auto it = document.begin(); it != document.end(); ++it) {
    if (!first_member) out += ",\n";
    first_member = false;
    out += "  " + dump_json(it.key(), what) + ": ";
    if (!it->is_array() || it->empty()) {
      out += dump_json(*it, what);
      continue;
    }
    const bool plain = std::none_of(it->begin(), it->end(), [](const auto& e) { return e.is_structured(); });
    out += "[\n    ";
    std::size_t line = 0;
    for (std::size_t i = 0; i < it->size(); ++i) append_array_element(out, line, i, dump_json((*it)[i], what), plain);
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

// JSON text of a string as nlohmann's dump writes it (escapes for quote, backslash and control
// characters, other bytes as they are); the caller has checked that it is valid UTF-8.
inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  // Runs of bytes that need no escape are appended at once, not byte by byte.
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) continue;
    out.append(text, plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xf];
          out += hex[c & 0xf];
        }
    }
  }
  out.append(text, plain, text.size() - plain);
  out += '"';
}

// A finite double in the notation of nlohmann's dump: fixed for decimal exponents from -4 to 15
// ("0.0", "2.0", "0.0012"), else "1.5e-07"; with the shortest digits that read back exactly
// (nlohmann's Grisu2 occasionally writes one digit more).
inline void append_json_number(std::string& out, double x) {
  char digits[32];
  if (std::signbit(x)) {
    out += '-';
    x = -x;
  }
  if (x == 0) {
    out += "0.0";
    return;
  }
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, x, std::chars_format::scientific);
  (void)error;
  const std::string_view text(digits, static_cast<std::size_t>(end - digits));
  const std::size_t e_at = text.find('e');
  std::string mantissa;
  mantissa += text[0];
  if (e_at > 1) mantissa.append(text.substr(2, e_at - 2));
  int exponent = 0;
  std::from_chars(text.data() + e_at + 1 + (text[e_at + 1] == '+' ? 1 : 0), text.data() + text.size(), exponent);
  const int k = static_cast<int>(mantissa.size()), n = exponent + 1;
  if (k <= n && n <= 15) {
    out += mantissa;
    out.append(static_cast<std::size_t>(n - k), '0');
    out += ".0";
  } else if (0 < n && n <= 15) {
    out.append(mantissa, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(mantissa, static_cast<std::size_t>(n));
  } else if (-4 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += mantissa;
  } else {
    out += mantissa[0];
    if (k > 1) {
      out += '.';
      out.append(mantissa, 1);
    }
    const int e = n - 1;
    out += e < 0 ? "e-" : "e+";
    const int magnitude = e < 0 ? -e : e;
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
  }
}

inline void append_json_unsigned(std::string& out, std::uint64_t x) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, x);
  (void)error;
  out.append(digits, end);
}

// A JSON number for a double that may be non-finite: JSON has no infinity, so it is refused.
inline nlohmann::ordered_json finite_number(double x, std::string_view what) {
  if (!std::isfinite(x)) throw invalid_input(std::string(what) + " is not finite (" + std::to_string(x) + ")");
  return x;
}

}  // namespace gantry::detail
