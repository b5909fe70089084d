// Atomic writing and gzip: a writer that fails leaves neither a file nor a temporary behind and
// keeps an older file intact; missing directories are io_errors naming the path; gzip data of
// every size, several members and corrupt input.
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_graph.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

using namespace gantry;
namespace fs = std::filesystem;

using test::scratch_directory;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a successful write leaves exactly the target with the content") {
  scratch_directory dir("io_atomic_ok");
  write_file_atomically(dir.path / "out.txt", [](std::ostream& out) { out << "hello\n" << 42; });
  CHECK(slurp(dir.path / "out.txt") == "hello\n42");
  CHECK(dir.entries() == 1);
  write_text_file(dir.path / "out.txt", "replaced");
  CHECK(slurp(dir.path / "out.txt") == "replaced");
  CHECK(dir.entries() == 1);
}

TEST_CASE("a writer that throws midway leaves no file and no temporary file behind") {
  scratch_directory dir("io_atomic_throw");
  CHECK_THROWS_WITH_AS(write_file_atomically(dir.path / "out.txt",
                                             [](std::ostream& out) {
                                               out << std::string(100000, 'x');
                                               throw std::runtime_error("failed halfway");
                                             }),
                       "failed halfway", std::runtime_error);
  CHECK(!fs::exists(dir.path / "out.txt"));
  CHECK(dir.entries() == 0);
}

TEST_CASE("a failed write keeps the previous file as it was") {
  scratch_directory dir("io_atomic_keep");
  write_text_file(dir.path / "graph.json", "previous content");
  CHECK_THROWS_AS(write_file_atomically(dir.path / "graph.json",
                                        [](std::ostream& out) {
                                          out << "new half";
                                          throw invalid_input("bad graph");
                                        }),
                  invalid_input);
  CHECK(slurp(dir.path / "graph.json") == "previous content");
  CHECK(dir.entries() == 1);
  // A graph the format cannot describe fails before anything is written, too.
  graph twins;
  twins.add_vertex("x");
  twins.add_vertex("x");
  CHECK_THROWS_AS(write_graph(dir.path / "graph.json", twins), invalid_input);
  CHECK(slurp(dir.path / "graph.json") == "previous content");
  CHECK(dir.entries() == 1);
}

TEST_CASE("writing into a missing directory is an io_error naming the path") {
  scratch_directory dir("io_atomic_missing");
  const fs::path target = dir.path / "no" / "such" / "dir" / "g.json";
  CHECK_THROWS_WITH_AS(
      write_text_file(target, "x"),
      ("cannot write '" + target.string() + "': directory '" + target.parent_path().string() + "' does not exist")
          .c_str(),
      io_error);
  graph g;
  g.add_vertex("a");
  CHECK_THROWS_WITH_AS(
      write_graph(target, g),
      ("cannot write '" + target.string() + "': directory '" + target.parent_path().string() + "' does not exist")
          .c_str(),
      io_error);
  CHECK_THROWS_AS(write_cluster(target, cluster::uniform(1)), io_error);
  CHECK(dir.entries() == 0);
}

TEST_CASE("a directory in the way of the target is an io_error") {
  scratch_directory dir("io_atomic_isdir");
  fs::create_directory(dir.path / "taken");
  CHECK_THROWS_WITH_AS(write_text_file(dir.path / "taken", "x"),
                       ("cannot write '" + (dir.path / "taken").string() + "': it is a directory").c_str(), io_error);
  CHECK_THROWS_AS(write_text_file("", "x"), io_error);
  CHECK(dir.entries() == 1);
}

TEST_CASE("gzip round-trips empty, small, large and incompressible data") {
  std::mt19937_64 rng(99);
  std::string noise(300000, '\0');
  for (auto& c : noise) c = static_cast<char>(rng() & 0xff);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"name\": \"v" + std::to_string(i) + "\"},\n";
  for (const std::string& data : {std::string(), std::string("x"), text, noise}) {
    const std::string packed = gzip_compress(data);
    CHECK(is_gzip(packed));
    CHECK(gzip_decompress(packed) == data);
  }
  CHECK(gzip_compress(text, 9).size() < text.size() / 5);
  // Concatenated members read as one stream, as gunzip does.
  CHECK(gzip_decompress(gzip_compress("first ") + gzip_compress("second")) == "first second");
  CHECK_THROWS_AS((void)gzip_compress("x", 42), invalid_input);
}

TEST_CASE("gzip: the inflated-size limit is exact, and the size trailer is only a hint") {
  const std::string data(100000, 'z');
  const std::string packed = gzip_compress(data);
  CHECK(gzip_decompress(packed, "limit.gz", data.size()) == data);
  CHECK_THROWS_WITH_AS((void)gzip_decompress(packed, "limit.gz", data.size() - 1),
                       doctest::Contains("limit.gz: the gzip data inflates to more than"), parse_error);
  // A trailer that claims 4 bytes or 4 GiB: the data still inflates (and the length check fails),
  // and the claim is not believed beyond what deflate can produce from the input.
  for (const unsigned char top : {0x00, 0xff}) {
    std::string lying = packed;
    lying[lying.size() - 4] = static_cast<char>(top == 0 ? 4 : 0xff);
    for (std::size_t i = lying.size() - 3; i < lying.size(); ++i) lying[i] = static_cast<char>(top);
    CHECK_THROWS_WITH_AS((void)gzip_decompress(lying, "isize.gz"),
                         "isize.gz: invalid gzip data: incorrect length check", parse_error);
  }
  // Members of very different sizes: the first member's output outgrows the last one's trailer.
  CHECK(gzip_decompress(gzip_compress(data) + gzip_compress("end")) == data + "end");
}

TEST_CASE("the fast inflater (libdeflate, where built with it) and zlib give the same bytes and the same errors") {
  std::mt19937_64 rng(7);
  std::string noise(70000, '\0');
  for (auto& c : noise) c = static_cast<char>(rng() & 0xff);
  const std::string text(250000, 'q');
  std::vector<std::string> inputs{gzip_compress(""),
                                  gzip_compress("x"),
                                  gzip_compress(text),
                                  gzip_compress(noise),
                                  gzip_compress(text) + gzip_compress("end"),
                                  gzip_compress("a") + gzip_compress(text),
                                  gzip_compress(text) + "trailing bytes that are not gzip",
                                  "",
                                  "plain"};
  std::string lying = gzip_compress(text);
  lying[lying.size() - 1] = '\x7f';  // the size trailer claims 2 GiB more
  inputs.push_back(lying);
  std::string bad_crc = gzip_compress(text);
  bad_crc[bad_crc.size() - 6] ^= 0x55;
  inputs.push_back(bad_crc);
  inputs.push_back(gzip_compress(text).substr(0, 100));
  for (const std::size_t limit : {std::size_t{1} << 30, text.size(), text.size() - 1, std::size_t{10}}) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      CAPTURE(i);
      CAPTURE(limit);
      std::string by_zlib, zlib_error, fast_error;
      try {
        detail::zlib_decompress_into(inputs[i], by_zlib, "in.gz", limit);
      } catch (const parse_error& e) {
        zlib_error = e.what();
      }
      detail::byte_buffer fast;
      try {
        detail::gzip_decompress_into(inputs[i], fast, "in.gz", limit);
      } catch (const parse_error& e) {
        fast_error = e.what();
      }
      CHECK(fast_error == zlib_error);
      if (zlib_error.empty()) CHECK(fast.view() == by_zlib);
#if defined(GANTRY_HAS_LIBDEFLATE)
      // libdeflate alone: it reads every valid input, and leaves corrupt ones to zlib's message.
      std::string by_libdeflate;
      bool read = false;
      try {
        read = detail::libdeflate_decompress_into(inputs[i], by_libdeflate, "in.gz", limit);
      } catch (const parse_error& e) {
        CHECK(std::string(e.what()) == zlib_error);
        continue;
      }
      CHECK(read == zlib_error.empty());
      if (read) CHECK(by_libdeflate == by_zlib);
#endif
    }
  }
}

TEST_CASE("corrupt gzip data is a parse_error naming its source") {
  CHECK_THROWS_WITH_AS((void)gzip_decompress("", "empty.gz"),
                       "empty.gz: invalid gzip data: the data ends early (truncated after 0 compressed bytes)",
                       parse_error);
  CHECK_THROWS_WITH_AS((void)gzip_decompress("plain text", "text.gz"),
                       "text.gz: invalid gzip data: incorrect header check", parse_error);
  std::string packed = gzip_compress(std::string(5000, 'a') + "tail");
  packed[packed.size() - 6] ^= 0x55;  // the CRC no longer matches
  CHECK_THROWS_WITH_AS((void)gzip_decompress(packed, "crc.gz"), "crc.gz: invalid gzip data: incorrect data check",
                       parse_error);
  // Every truncation of a gzip stream is reported, never read as a shorter file.
  const std::string whole = gzip_compress("{\"format\": \"gantry.graph\"}");
  for (std::size_t cut = 0; cut < whole.size(); ++cut)
    CHECK_THROWS_AS((void)gzip_decompress(whole.substr(0, cut)), parse_error);
}

TEST_CASE("read_text_file reads plain files as they are") {
  scratch_directory dir("io_atomic_read");
  const std::string bytes("binary\0data\xff", 12);
  write_text_file(dir.path / "f.bin", bytes);
  CHECK(read_text_file(dir.path / "f.bin") == bytes);
  save_text_file(dir.path / "f.txt.GZ", "compressed by name");
  CHECK(is_gzip(slurp(dir.path / "f.txt.GZ")));
  CHECK(read_text_file(dir.path / "f.txt.GZ") == "compressed by name");
}

TEST_CASE("reading file after file through the reused buffers gives each file's own bytes") {
  scratch_directory dir("io_atomic_reuse");
  std::string big;
  for (int i = 0; i < 40000; ++i) big += "line " + std::to_string(i) + "\n";  // larger than one 64 KiB chunk
  write_text_file(dir.path / "big.txt", big);
  save_text_file(dir.path / "big.txt.gz", big);
  write_text_file(dir.path / "small.txt", "short");
  save_text_file(dir.path / "small.txt.gz", "tiny");
  write_text_file(dir.path / "empty.txt", "");
  // A long file, then shorter ones: nothing of the longer text shows through.
  for (int round = 0; round < 2; ++round) {
    CHECK(read_text_file(dir.path / "big.txt") == big);
    CHECK(read_text_file(dir.path / "small.txt") == "short");
    CHECK(read_text_file(dir.path / "big.txt.gz") == big);
    CHECK(read_text_file(dir.path / "small.txt.gz") == "tiny");
    CHECK(read_text_file(dir.path / "empty.txt").empty());
  }
  // A file read while another file's text is in use gets buffers of its own.
  const std::string both = detail::with_text_file(dir.path / "big.txt.gz", {}, [&](std::string_view outer) {
    const std::string inner = read_text_file(dir.path / "small.txt.gz");
    return std::string(outer.substr(0, 6)) + inner + std::string(outer.substr(outer.size() - 6));
  });
  CHECK(both == "line 0tiny39999\n");
  // An error leaves the buffers usable.
  CHECK_THROWS_AS((void)read_text_file(dir.path / "missing.txt"), io_error);
  write_text_file(dir.path / "bad.gz", std::string("\x1f\x8b", 2) + "not deflate");
  CHECK_THROWS_AS((void)read_text_file(dir.path / "bad.gz"), parse_error);
  CHECK(read_text_file(dir.path / "small.txt") == "short");
}

TEST_CASE("a legal file name of up to 255 bytes is written (the temporary name is shortened)") {
  scratch_directory dir("io_atomic_long_name");
  for (const std::size_t length : {234u, 250u, 255u}) {
    const fs::path target = dir.path / std::string(length, 'n');
    write_text_file(target, "content");
    CHECK(slurp(target) == "content");
    CHECK(detail::temporary_path_for(target).filename().string().size() <= 255);
  }
  CHECK(dir.entries() == 3);
}

TEST_CASE("a group of files appears all together or not at all") {
  scratch_directory dir("io_atomic_group");
  write_text_file(dir.path / "a.txt", "old a");
  {
    atomic_file_group group;
    group.add_text(dir.path / "a.txt", "new a");
    group.add_text(dir.path / "b.txt", "new b");
    CHECK(group.size() == 2);
    CHECK(slurp(dir.path / "a.txt") == "old a");  // nothing visible before the commit
    CHECK(!fs::exists(dir.path / "b.txt"));
    CHECK_THROWS_WITH_AS(group.add_text(dir.path / "missing" / "c.txt", "c"), doctest::Contains("missing"), io_error);
    CHECK_THROWS_WITH_AS(group.add_text(dir.path / "b.txt", "again"), doctest::Contains("twice"), io_error);
    // No commit: the group is dropped as a failed command drops it.
  }
  CHECK(slurp(dir.path / "a.txt") == "old a");
  CHECK(!fs::exists(dir.path / "b.txt"));
  CHECK(dir.entries() == 1);
  {
    atomic_file_group group;
    group.add_text(dir.path / "a.txt", "new a");
    add_text_file(group, dir.path / "b.txt.gz", "new b");
    group.commit();
  }
  CHECK(slurp(dir.path / "a.txt") == "new a");
  CHECK(read_text_file(dir.path / "b.txt.gz") == "new b");
  CHECK(dir.entries() == 2);
}

TEST_CASE("SIGTERM during a write removes the temporary file") {
  scratch_directory dir("io_atomic_signal");
  for (const int signal_number : {SIGTERM, SIGINT}) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      remove_temporary_files_on_signals();
      write_file_atomically(dir.path / "out.txt", [&](std::ostream& out) {
        out << "half" << std::flush;
        std::raise(signal_number);
      });
      std::_Exit(0);  // not reached: the signal ends the process
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK(dir.entries() == 0);
  }
}
