// One name table per enum. An enum opts in beside its definition with a constexpr function that
// argument-dependent lookup finds,
//   constexpr std::span<const enum_name<E>> enum_names(E) { return table; }   // the argument only picks E
// and its to_string(), parsing (parse_enum), the JSON readers and writers and the CLI's choices
// (enum_name_list, enum_choices) all read that table, so a name is spelt once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gantry {

template <class E>
struct enum_name {
  E value;
  const char* name;  // a string literal, so to_string() can hand it out
};

template <class E>
concept named_enum = std::is_enum_v<E> && requires(E e) {
  { enum_names(e) } -> std::convertible_to<std::span<const enum_name<E>>>;
};

// The name of e in its table, or "unknown" for a value the table does not list.
template <named_enum E>
[[nodiscard]] constexpr const char* name_of(E e) noexcept {
  for (const auto& entry : enum_names(E{}))
    if (entry.value == e) return entry.name;
  return "unknown";
}

// The value named `text`, ignoring ASCII case; nullopt when no name matches.
template <named_enum E>
[[nodiscard]] constexpr std::optional<E> parse_enum(std::string_view text) noexcept {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const auto& entry : enum_names(E{})) {
    const std::string_view name = entry.name;
    if (name.size() != text.size()) continue;
    std::size_t i = 0;
    while (i < name.size() && lower(name[i]) == lower(text[i])) ++i;
    if (i == name.size()) return entry.value;
  }
  return std::nullopt;
}

// Every name, in table order (for CLI::IsMember and help texts).
template <named_enum E>
[[nodiscard]] std::vector<std::string> enum_name_list() {
  std::vector<std::string> names;
  for (const auto& entry : enum_names(E{})) names.emplace_back(entry.name);
  return names;
}

// The Levenshtein distance between two short names.
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The name among `names` (string-like) nearest to a misspelt `text`, within half its length (the
// first of equals); empty when none is that near. For "did you mean" in messages.
template <class Names>
[[nodiscard]] std::string nearest_name(std::string_view text, const Names& names) {
  std::string nearest;
  std::size_t best = text.size() / 2 + 1;
  for (const auto& candidate : names) {
    const std::string_view name = candidate;
    if (const std::size_t d = edit_distance(text, name); d < best) {
      best = d;
      nearest = name;
    }
  }
  return nearest;
}

// " (did you mean 'b'?)" for the name nearest_name() finds, or nothing when none is near.
template <class Names>
[[nodiscard]] std::string did_you_mean(std::string_view text, const Names& names) {
  const std::string nearest = nearest_name(text, names);
  return nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)";
}

// "a, b or c": the names for a message that says what was expected.
template <named_enum E>
[[nodiscard]] std::string enum_choices() {
  const auto names = enum_name_list<E>();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace gantry
