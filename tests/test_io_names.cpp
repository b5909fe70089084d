// One name table per enum (core/enum_names.hpp): every name to_string() gives parses back to its
// value, in any case; unknown names are refused with the choices; and input quoted into messages
// (detail::quoted) never carries raw bytes.
#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/fusion/fusion.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/model/topology.hpp>
#include <gantry/pipeline/comm_partition.hpp>
#include <gantry/pipeline/plan.hpp>
#include <gantry/sim/simulator.hpp>

#include <doctest/doctest.h>

#include <cctype>
#include <string>

using namespace gantry;

namespace {

template <named_enum E>
void require_names_round_trip(std::size_t expected_count) {
  const auto names = enum_name_list<E>();
  CHECK(names.size() == expected_count);
  for (const auto& entry : enum_names(E{})) {
    CAPTURE(entry.name);
    CHECK(std::string(to_string(entry.value)) == entry.name);
    CHECK(parse_enum<E>(entry.name) == entry.value);
    std::string upper = entry.name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(parse_enum<E>(upper) == entry.value);
    CHECK(parse_enum_name<E>(entry.name, "thing") == entry.value);
  }
  CHECK_FALSE(parse_enum<E>("").has_value());
  CHECK_FALSE(parse_enum<E>("no such name").has_value());
}

// Every byte of a message is printable ASCII (UTF-8 text of names aside, none is used here).
bool printable(const std::string& text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
  return true;
}

}  // namespace

TEST_CASE("each enum's names come from one table and parse back") {
  require_names_round_trip<status>(5);
  require_names_round_trip<comm_mode>(3);
  require_names_round_trip<fusion_rule>(2);
  require_names_round_trip<transfer_overlap>(2);
  require_names_round_trip<pipeline_schedule>(3);
  require_names_round_trip<ready_policy>(4);
  CHECK(std::string(to_string(ready_policy::bottom_level)) == "bottom-level");
  CHECK(std::string(to_string(comm_mode::duplex)) == "duplex");
  CHECK(std::string(to_string(status::out_of_memory)) == "out of memory");
  CHECK(std::string(to_string(pipeline_schedule::one_f_one_b_star)) == "1f1b*");
  CHECK(std::string(name_of(static_cast<comm_mode>(7))) == "unknown");
  CHECK(enum_choices<comm_mode>() == "parallel, sequential or duplex");
  CHECK(enum_choices<fusion_rule>() == "baechi or exact");
}

TEST_CASE("an unknown name is refused naming what was asked, the text and the choices") {
  try {
    (void)parse_enum_name<comm_mode>("broadcast", "--comm");
    FAIL("no error");
  } catch (const invalid_input& e) {
    CHECK(std::string(e.what()) == "unknown --comm 'broadcast' (expected parallel, sequential or duplex)");
  }
  try {
    (void)parse_pipeline_schedule("2f2b");
    FAIL("no error");
  } catch (const invalid_input& e) {
    CHECK(std::string(e.what()) ==
          "unknown pipeline schedule '2f2b' (did you mean '1f1b'?) (expected 1f1b*, 1f1b or gpipe)");
  }
  CHECK(parse_pipeline_schedule("GPipe") == pipeline_schedule::gpipe);
  CHECK(parse_comm_mode("Sequential") == comm_mode::sequential);
}

TEST_CASE("quoted input shows control characters, binary junk and broken UTF-8 as escapes") {
  CHECK(detail::quoted("plain") == "'plain'");
  CHECK(detail::quoted("it's a\\b") == "'it\\'s a\\\\b'");
  CHECK(detail::quoted("a\nb\tc\r") == "'a\\nb\\tc\\r'");
  CHECK(detail::quoted(std::string("\x00\x01\x7f", 3)) == "'\\x00\\x01\\x7F'");
  CHECK(detail::quoted("\xC3\xBC ok") == "'\xC3\xBC ok'");         // valid UTF-8 stays
  CHECK(detail::quoted("\xC3 \xFF\xFE") == "'\\xC3 \\xFF\\xFE'");  // broken UTF-8 does not
  CHECK(detail::quoted("\xE0\x80\x80") == "'\\xE0\\x80\\x80'");    // an overlong form
  CHECK(detail::quoted("\xED\xA0\x80") == "'\\xED\\xA0\\x80'");    // a surrogate
  CHECK(detail::quoted(std::string(100, 'x')) == "'" + std::string(80, 'x') + "...'");
  CHECK(detail::quoted("say \"hi\"\x01", '"') == "\"say \\\"hi\\\"\\x01\"");
}

TEST_CASE("a cluster file with binary junk in a name field gets a printable message naming the field") {
  const std::string junk = "\x01\x02\x1b[31m\xff";
  // JSON escapes carry the control characters into the string; the reader must not print them.
  const std::string text = R"({"format": "gantry.cluster", "version": 1, "communication": "\u0001\u0002\u001b[31m",
                               "devices": [{"name": "a"}]})";
  try {
    (void)read_cluster_json(text, "c.json");
    FAIL("no error");
  } catch (const parse_error& e) {
    const std::string message = e.what();
    CHECK(message ==
          "c.json: /communication: unknown mode '\\x01\\x02\\x1B[31m' (expected parallel, sequential or duplex)");
    CHECK(printable(message));
  }
  try {
    (void)parse_enum_name<comm_mode>(junk, "--comm");
    FAIL("no error");
  } catch (const invalid_input& e) {
    CHECK(printable(e.what()));
  }
}
