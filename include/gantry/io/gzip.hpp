// Reading and writing files that may be gzip-compressed: read_text_file() recognises gzip by its
// magic bytes (not by the extension) and inflates it; save_text_file() compresses when the target
// ends in ".gz" and always writes atomically. Uses zlib, and libdeflate (faster) to inflate where
// gantry::io found it (GANTRY_HAS_LIBDEFLATE).
#pragma once

#include <gantry/core/huge_pages.hpp>
#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/limits.hpp>

#include <zlib.h>
#if defined(GANTRY_HAS_LIBDEFLATE)
#include <libdeflate.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>

namespace gantry {

// True when `bytes` starts with the gzip magic number (1f 8b).
[[nodiscard]] inline bool is_gzip(std::string_view bytes) noexcept {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace detail {
// Scratch bytes for file text: grows without zero-filling what it is about to overwrite and keeps
// its storage from one use to the next, so reading file after file touches no fresh pages.
class byte_buffer {
 public:
  [[nodiscard]] char* data() noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::string_view view() const noexcept { return {data_.get(), size_}; }
  void clear() noexcept { size_ = 0; }
  // Makes size() n; bytes past the old size are unspecified until written.
  void resize_for_overwrite(std::size_t n) {
    if (n > capacity_) {
      auto bigger = std::make_unique_for_overwrite<char[]>(n);
      advise_huge_pages(bigger.get(), n);
      if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
      data_ = std::move(bigger);
      capacity_ = n;
    }
    size_ = n;
  }
  // Gives the storage back when it is larger than `keep` bytes.
  void shrink_to(std::size_t keep) noexcept {
    if (capacity_ > keep) {
      data_.reset();
      capacity_ = size_ = 0;
    }
  }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0, size_ = 0;
};

inline void resize_for_overwrite(std::string& s, std::size_t n) { s.resize(n); }
inline void resize_for_overwrite(byte_buffer& b, std::size_t n) { b.resize_for_overwrite(n); }

[[noreturn]] inline void throw_inflated_too_large(std::string_view source_name, std::size_t max_inflated_bytes) {
  throw parse_error(std::string(source_name) + ": the gzip data inflates to more than " +
                    format_bytes(max_inflated_bytes) + " (" + std::to_string(max_inflated_bytes) +
                    " bytes), the limit for one input file; raise read_limits::max_inflated_bytes "
                    "(--max-inflated-size in the gantry tool) if the file is genuine");
}

// The first size to try for the inflated data: the last member's ISIZE trailer (the inflated size
// modulo 2^32: a hint, never trusted beyond what deflate can produce, 1032 bytes per input byte,
// nor beyond the limit, so a small file with a lying trailer costs little), plus one byte that
// tells a file of exactly the limit from a larger one.
inline std::size_t inflated_size_hint(std::string_view bytes, std::size_t max_inflated_bytes) {
  std::size_t hint = bytes.size() * 4;
  if (bytes.size() >= 18) {
    const auto* tail = reinterpret_cast<const unsigned char*>(bytes.data() + bytes.size() - 4);
    const std::size_t trailer = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (std::size_t{tail[3]} << 24);
    hint = std::max(hint, std::min(trailer, bytes.size() * 1032));
  }
  return std::min(hint, max_inflated_bytes) + 1;
}

// Inflates gzip `bytes` into `out` (a std::string or a byte_buffer, whose content is replaced)
// with zlib, whose messages name what is wrong with corrupt data.
template <class Buffer>
void zlib_decompress_into(std::string_view bytes, Buffer& out, std::string_view source_name,
                          std::size_t max_inflated_bytes) {
  const auto fail = [&](const std::string& why) {
    throw parse_error(std::string(source_name) + ": invalid gzip data: " + why);
  };
  const auto too_large = [&] { throw_inflated_too_large(source_name, max_inflated_bytes); };
  z_stream stream{};
  // 15 + 16: a gzip header is required (zlib and raw deflate streams are not gzip files).
  if (inflateInit2(&stream, 15 + 16) != Z_OK) fail("zlib could not be initialised");
  struct end_stream {
    z_stream* s;
    ~end_stream() { inflateEnd(s); }
  } cleanup{&stream};

  // Inflate straight into `out`, sized first by the hint and doubled when full.
  resize_for_overwrite(out, inflated_size_hint(bytes, max_inflated_bytes));
  std::size_t used = 0;
  constexpr std::size_t max_chunk = std::size_t{1} << 30;  // avail_in and avail_out are 32 bits
  std::size_t consumed = 0;
  bool finished = false;
  while (true) {
    if (stream.avail_in == 0 && consumed < bytes.size()) {
      const std::size_t chunk = std::min(max_chunk, bytes.size() - consumed);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
      stream.avail_in = static_cast<uInt>(chunk);
      consumed += chunk;
    }
    if (used == out.size()) {
      if (used > max_inflated_bytes) too_large();
      // One byte beyond the limit tells a file of exactly the limit from a larger one.
      resize_for_overwrite(out, std::min(out.size() * 2, max_inflated_bytes + 1));
    }
    const std::size_t room = std::min(max_chunk, out.size() - used);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    stream.avail_out = static_cast<uInt>(room);
    const int result = inflate(&stream, Z_NO_FLUSH);
    used += room - stream.avail_out;
    if (used > max_inflated_bytes) too_large();
    if (result == Z_STREAM_END) {
      const std::size_t remaining = stream.avail_in + (bytes.size() - consumed);
      const std::string_view rest = bytes.substr(bytes.size() - remaining);
      if (!is_gzip(rest)) {
        finished = true;
        break;
      }
      if (inflateReset(&stream) != Z_OK) fail("zlib could not be reset for the next member");
      continue;
    }
    if (result == Z_BUF_ERROR && stream.avail_in == 0 && consumed == bytes.size() && stream.avail_out > 0) break;
    if (result != Z_OK && result != Z_BUF_ERROR)
      fail(stream.msg != nullptr ? std::string(stream.msg) : "inflate failed (code " + std::to_string(result) + ")");
  }
  resize_for_overwrite(out, used);
  if (!finished) fail("the data ends early (truncated after " + std::to_string(bytes.size()) + " compressed bytes)");
}

#if defined(GANTRY_HAS_LIBDEFLATE)
// libdeflate inflates whole buffers 2-3x faster than zlib (the shipped graphs: 0.14 ms against
// 0.42 ms for GPT-2). It checks the same CRC and size trailers but names no reason for a
// failure, so corrupt data goes through zlib again for the message. Returns false then. One
// decompressor per thread, made on its first read (it keeps no state between calls).
template <class Buffer>
bool libdeflate_decompress_into(std::string_view bytes, Buffer& out, std::string_view source_name,
                                std::size_t max_inflated_bytes) {
  struct decompressor {
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    ~decompressor() { libdeflate_free_decompressor(d); }
  };
  static thread_local const decompressor inflater;
  if (inflater.d == nullptr) throw std::bad_alloc();
  resize_for_overwrite(out, inflated_size_hint(bytes, max_inflated_bytes));
  std::size_t used = 0, consumed = 0;
  do {  // one gzip member per round; concatenated members read as one stream, as gunzip does
    std::size_t member_in = 0, member_out = 0;
    const libdeflate_result result =
        libdeflate_gzip_decompress_ex(inflater.d, bytes.data() + consumed, bytes.size() - consumed, out.data() + used,
                                      out.size() - used, &member_in, &member_out);
    if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
      if (out.size() > max_inflated_bytes) throw_inflated_too_large(source_name, max_inflated_bytes);
      resize_for_overwrite(out, std::min(out.size() * 2, max_inflated_bytes + 1));
      continue;  // the member again, into the larger buffer
    }
    if (result != LIBDEFLATE_SUCCESS) return false;
    used += member_out;
    consumed += member_in;
    if (used > max_inflated_bytes) throw_inflated_too_large(source_name, max_inflated_bytes);
  } while (is_gzip(bytes.substr(consumed)));
  resize_for_overwrite(out, used);
  return true;
}
#endif

// Inflates gzip `bytes` into `out` (a std::string or a byte_buffer, whose content is replaced):
// with libdeflate where gantry::io was built with it, else (and for the message about corrupt
// data) with zlib.
template <class Buffer>
void gzip_decompress_into(std::string_view bytes, Buffer& out, std::string_view source_name,
                          std::size_t max_inflated_bytes) {
#if defined(GANTRY_HAS_LIBDEFLATE)
  if (libdeflate_decompress_into(bytes, out, source_name, max_inflated_bytes)) return;
#endif
  zlib_decompress_into(bytes, out, source_name, max_inflated_bytes);
}
}  // namespace detail

// Inflates gzip data (several concatenated members are read as one stream, as gunzip does).
// Throws parse_error naming `source_name` for corrupt or truncated data, and for data that
// inflates to more than `max_inflated_bytes` (stopping there, so a bomb costs no more memory).
[[nodiscard]] inline std::string gzip_decompress(std::string_view bytes, std::string_view source_name = "<gzip data>",
                                                 std::size_t max_inflated_bytes = read_limits{}.max_inflated_bytes) {
  std::string out;
  detail::gzip_decompress_into(bytes, out, source_name, max_inflated_bytes);
  return out;
}

// Compresses `text` into a gzip member. level: 1 (fastest) .. 9 (smallest), Z_DEFAULT_COMPRESSION.
[[nodiscard]] inline std::string gzip_compress(std::string_view text, int level = Z_DEFAULT_COMPRESSION) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw invalid_input("gzip_compress: invalid compression level " + std::to_string(level));
  struct end_stream {
    z_stream* s;
    ~end_stream() { deflateEnd(s); }
  } cleanup{&stream};
  std::string out;
  constexpr std::size_t max_chunk = std::size_t{1} << 30;
  std::size_t consumed = 0;
  char buffer[1 << 16];
  int result = Z_OK;
  do {
    if (stream.avail_in == 0 && consumed < text.size()) {
      const std::size_t chunk = std::min(max_chunk, text.size() - consumed);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + consumed));
      stream.avail_in = static_cast<uInt>(chunk);
      consumed += chunk;
    }
    const int flush = consumed == text.size() ? Z_FINISH : Z_NO_FLUSH;
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    result = deflate(&stream, flush);
    if (result == Z_STREAM_ERROR) throw io_error("gzip_compress: deflate failed");
    out.append(buffer, sizeof buffer - stream.avail_out);
  } while (result != Z_STREAM_END);
  return out;
}

namespace detail {
// Reads the bytes of `path` into `out`. Throws io_error naming the path.
inline void read_file_bytes(const std::filesystem::path& path, byte_buffer& out) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) throw io_error("cannot read " + quote_path(path) + ": no such file");
  if (fs::is_directory(path, error)) throw io_error("cannot read " + quote_path(path) + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int reason = errno;
    throw io_error("cannot read " + quote_path(path) + ": " + errno_text(reason));
  }
  // The size is a first guess only: a pipe or a growing file reads on until its end.
  const std::uintmax_t size = fs::file_size(path, error);
  std::size_t chunk = error || size == 0 || size > (std::size_t{1} << 30) ? std::size_t{1} << 16 : size + 1;
  out.clear();
  for (;;) {
    const std::size_t used = out.size();
    out.resize_for_overwrite(used + chunk);
    in.read(out.data() + used, static_cast<std::streamsize>(chunk));
    out.resize_for_overwrite(used + static_cast<std::size_t>(in.gcount()));
    if (!in) break;
    chunk = std::max<std::size_t>(out.size(), std::size_t{1} << 16);
  }
  if (in.bad()) throw io_error("cannot read " + quote_path(path) + ": reading failed");
}

// Calls use(text) with the content of `path`, inflated when it is gzip data, and returns what it
// returns. The text lives in per-thread scratch buffers kept between calls (up to 64 MiB each), so
// a program that reads many files does not fault in fresh pages for every one. Throws io_error when
// the file cannot be read, parse_error when its gzip data is corrupt or inflates beyond the limit.
template <class Use>
decltype(auto) with_text_file(const std::filesystem::path& path, const read_limits& limits, Use&& use) {
  struct scratch {
    byte_buffer raw, inflated;
    bool busy = false;
  };
  thread_local scratch shared;
  scratch local;  // when `use` itself reads a file
  scratch& s = shared.busy ? local : shared;
  struct release {
    scratch& s;
    explicit release(scratch& t) : s(t) { s.busy = true; }
    ~release() {
      constexpr std::size_t keep = std::size_t{64} << 20;
      s.raw.shrink_to(keep);
      s.inflated.shrink_to(keep);
      s.busy = false;
    }
  } guard{s};
  read_file_bytes(path, s.raw);
  if (!is_gzip(s.raw.view())) return std::forward<Use>(use)(s.raw.view());
  gzip_decompress_into(s.raw.view(), s.inflated, path.string(), limits.max_inflated_bytes);
  return std::forward<Use>(use)(s.inflated.view());
}
}  // namespace detail

// The whole content of a file, inflated when it is gzip data. Throws io_error naming the path
// when it cannot be read, parse_error when its gzip data is corrupt or inflates beyond the limit.
[[nodiscard]] inline std::string read_text_file(const std::filesystem::path& path, const read_limits& limits = {}) {
  return detail::with_text_file(path, limits, [](std::string_view text) { return std::string(text); });
}

// True when `path` ends in ".gz" (any case).
[[nodiscard]] inline bool has_gzip_extension(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension.size() == 3 && extension[0] == '.' && (extension[1] | 0x20) == 'g' && (extension[2] | 0x20) == 'z';
}

namespace detail {
// What make() returns, with an invalid_input from it (a value a file cannot hold) naming the file
// the content was meant for.
template <class Make>
std::string content_for(const std::filesystem::path& path, Make&& make) {
  try {
    return make();
  } catch (const invalid_input& e) {
    throw invalid_input("cannot write " + quote_path(path) + ": " + e.what());
  }
}
}  // namespace detail

// Adds `text` to a group of files written together, gzip-compressed when the target ends in ".gz".
inline void add_text_file(atomic_file_group& group, const std::filesystem::path& target, std::string_view text) {
  if (has_gzip_extension(target)) group.add_text(target, gzip_compress(text));
  else group.add_text(target, text);
}

// Writes `text` to `target` atomically, gzip-compressed when the target ends in ".gz".
inline void save_text_file(const std::filesystem::path& target, std::string_view text) {
  if (has_gzip_extension(target)) write_text_file(target, gzip_compress(text));
  else write_text_file(target, text);
}

}  // namespace gantry
