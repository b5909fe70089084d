// Writing files so that a reader never sees half of one: the content goes to a temporary file in
// the target's directory, which is renamed over the target only after a successful write, flush
// and close. If writing fails (or the writer throws), the temporary file is removed and the
// target is left as it was. Every gantry writer goes through write_file_atomically().
#pragma once

#include <gantry/core/types.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#if __has_include(<fcntl.h>) && __has_include(<unistd.h>)
#include <fcntl.h>
#include <unistd.h>
#define GANTRY_IO_HAS_FSYNC 1
#endif

namespace gantry {

namespace detail {

inline std::string quote_path(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

inline std::string errno_text(int error) { return error != 0 ? std::string(std::strerror(error)) : "unknown error"; }

// A name no other writer in this or another process will pick: target name, process-unique
// counter and random bits.
inline std::filesystem::path temporary_path_for(const std::filesystem::path& target) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 bits{std::random_device{}() ^
                                    static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  const std::uint64_t salt = bits() ^ (counter.fetch_add(1) << 48);
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx.tmp", static_cast<unsigned long long>(salt));
  std::filesystem::path temp = target;
  temp += suffix;
  // A leading dot keeps the file out of directory listings while it exists.
  return temp.parent_path() / ("." + temp.filename().string());
}

// Flushes the file's data to the disk, so a crash after the rename cannot leave an empty target.
inline void sync_file(const std::filesystem::path& path) {
#ifdef GANTRY_IO_HAS_FSYNC
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  (void)::fsync(fd);
  (void)::close(fd);
#else
  (void)path;
#endif
}

// Removes the temporary file on every way out unless released.
class temporary_file_guard {
 public:
  explicit temporary_file_guard(std::filesystem::path path) : path_(std::move(path)) {}
  temporary_file_guard(const temporary_file_guard&) = delete;
  temporary_file_guard& operator=(const temporary_file_guard&) = delete;
  ~temporary_file_guard() {
    if (!released_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }
  void release() noexcept { released_ = true; }

 private:
  std::filesystem::path path_;
  bool released_ = false;
};

}  // namespace detail

// Calls write(stream) on a stream into a temporary file next to `target`, then renames it over
// `target`. Throws io_error naming the path when the directory is missing, the file cannot be
// created, written or renamed; an exception from `write` propagates unchanged. Either way no
// temporary file is left behind and an existing target is untouched.
template <class Writer>
  requires std::invocable<Writer&, std::ostream&>
void write_file_atomically(const std::filesystem::path& target, Writer&& write) {
  namespace fs = std::filesystem;
  if (target.empty()) throw io_error("cannot write a file with an empty path");
  if (!target.has_filename()) throw io_error("cannot write " + detail::quote_path(target) + ": the path names a directory");
  const fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw io_error("cannot write " + detail::quote_path(target) + ": directory " + detail::quote_path(directory) +
                   " does not exist");
  if (fs::is_directory(target, error))
    throw io_error("cannot write " + detail::quote_path(target) + ": it is a directory");

  const fs::path temporary = detail::temporary_path_for(target);
  detail::temporary_file_guard guard(temporary);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      const int reason = errno;
      throw io_error("cannot write " + detail::quote_path(target) + ": cannot create a file in " +
                     detail::quote_path(directory) + " (" + detail::errno_text(reason) + ")");
    }
    write(static_cast<std::ostream&>(out));
    out.flush();
    if (!out) {
      const int reason = errno;
      throw io_error("cannot write " + detail::quote_path(target) + ": writing failed (" + detail::errno_text(reason) + ")");
    }
    out.close();
    if (out.fail()) {
      const int reason = errno;
      throw io_error("cannot write " + detail::quote_path(target) + ": closing failed (" + detail::errno_text(reason) + ")");
    }
  }
  detail::sync_file(temporary);
  fs::rename(temporary, target, error);
  if (error)
    throw io_error("cannot write " + detail::quote_path(target) + ": renaming the temporary file over it failed (" +
                   error.message() + ")");
  guard.release();
}

// Writes `content` to `target` atomically (see write_file_atomically).
inline void write_text_file(const std::filesystem::path& target, std::string_view content) {
  write_file_atomically(target, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

}  // namespace gantry
