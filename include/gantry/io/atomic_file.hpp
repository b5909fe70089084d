// Writing files so that a reader never sees half of one: the content goes to a temporary file in
// the target's directory, which is renamed over the target only after a successful write, flush
// and close. If writing fails (or the writer throws), the temporary file is removed and the
// target is left as it was. Every gantry writer goes through write_file_atomically(); a command
// with several outputs writes them through one atomic_file_group, so that all appear or none.
// remove_temporary_files_on_signals() makes SIGINT, SIGTERM and SIGHUP remove the temporaries
// of writes in progress; SIGKILL cannot be caught and may leave a hidden ".NAME.*.tmp" behind.
#pragma once

#include <gantry/core/types.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

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
// counter and random bits. The target's name is shortened when needed, so that a legal name of
// up to 255 bytes still leaves room for the 22 bytes added here.
inline std::filesystem::path temporary_path_for(const std::filesystem::path& target) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 bits{
      std::random_device{}() ^ static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  const std::uint64_t salt = bits() ^ (counter.fetch_add(1) << 48);
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%016llx.tmp", static_cast<unsigned long long>(salt));
  constexpr std::size_t max_name = 255;  // NAME_MAX of Linux file systems
  std::string name = target.filename().string();
  const std::size_t room = max_name - 1 - std::strlen(suffix);  // 1 for the leading dot
  if (name.size() > room) name.resize(room);
  // A leading dot keeps the file out of directory listings while it exists.
  return target.parent_path() / ("." + name + suffix);
}

// Temporary files of writes in progress, for a signal handler to remove. Fixed slots and
// atomics only: a handler may call nothing that allocates or locks.
struct live_temporary_files {
  static constexpr std::size_t slots = 64;
  static constexpr std::size_t path_bytes = 4096;
  enum : int { free_slot = 0, filling = 1, live = 2 };
  std::atomic<int> state[slots] = {};
  char path[slots][path_bytes] = {};
};
inline live_temporary_files& live_temporaries() noexcept {
  static live_temporary_files files;
  return files;
}
// Registers `path`; returns the slot, or `slots` when the path is too long or all slots are taken
// (the file is then only removed by the normal paths, not by a signal).
inline std::size_t register_temporary(const std::filesystem::path& path) noexcept {
  auto& files = live_temporaries();
  const std::string& text = path.native();
  if (text.size() >= live_temporary_files::path_bytes) return live_temporary_files::slots;
  for (std::size_t i = 0; i < live_temporary_files::slots; ++i) {
    int expected = live_temporary_files::free_slot;
    if (files.state[i].compare_exchange_strong(expected, live_temporary_files::filling)) {
      std::memcpy(files.path[i], text.c_str(), text.size() + 1);
      files.state[i].store(live_temporary_files::live);
      return i;
    }
  }
  return live_temporary_files::slots;
}
inline void unregister_temporary(std::size_t slot) noexcept {
  if (slot < live_temporary_files::slots) live_temporaries().state[slot].store(live_temporary_files::free_slot);
}

#ifdef GANTRY_IO_HAS_FSYNC
extern "C" inline void remove_temporaries_and_reraise(int signal_number) {
  auto& files = live_temporaries();
  for (std::size_t i = 0; i < live_temporary_files::slots; ++i)
    if (files.state[i].load() == live_temporary_files::live) (void)::unlink(files.path[i]);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}
#endif

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

// Removes the temporary file on every way out unless released; registered meanwhile, so that a
// signal handler can remove it too.
class temporary_file_guard {
 public:
  explicit temporary_file_guard(std::filesystem::path path)
      : path_(std::move(path)), slot_(register_temporary(path_)) {}
  temporary_file_guard(const temporary_file_guard&) = delete;
  temporary_file_guard& operator=(const temporary_file_guard&) = delete;
  ~temporary_file_guard() {
    if (!released_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
    unregister_temporary(slot_);
  }
  void release() noexcept { released_ = true; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  std::size_t slot_;
  bool released_ = false;
};

}  // namespace detail

// Several files written so that either all of them appear or none does: add() writes each into
// a temporary file next to its target, commit() renames them all over their targets. Destroyed
// without a commit (an error in between), it removes its temporary files and no target changes.
class atomic_file_group {
 public:
  atomic_file_group() = default;
  atomic_file_group(const atomic_file_group&) = delete;
  atomic_file_group& operator=(const atomic_file_group&) = delete;

  // Calls write(stream) on a stream into a temporary file next to `target`. Throws io_error
  // naming the path when the directory is missing, the file cannot be created or written, or
  // `target` is already in the group; an exception from `write` propagates unchanged.
  template <class Writer>
  requires std::invocable<Writer&, std::ostream&>
  void add(const std::filesystem::path& target, Writer&& write) {
    namespace fs = std::filesystem;
    if (target.empty()) throw io_error("cannot write a file with an empty path");
    if (!target.has_filename())
      throw io_error("cannot write " + detail::quote_path(target) + ": the path names a directory");
    const fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::error_code error;
    if (!fs::is_directory(directory, error))
      throw io_error("cannot write " + detail::quote_path(target) + ": directory " + detail::quote_path(directory) +
                     " does not exist");
    if (fs::is_directory(target, error))
      throw io_error("cannot write " + detail::quote_path(target) + ": it is a directory");
    for (const auto& file : files_)
      if (fs::weakly_canonical(file->target, error) == fs::weakly_canonical(target, error))
        throw io_error("cannot write " + detail::quote_path(target) + " twice in one command (two outputs name it)");

    auto file = std::make_unique<staged_file>(target);
    {
      std::ofstream out(file->guard.path(), std::ios::binary | std::ios::trunc);
      if (!out) {
        const int reason = errno;
        throw io_error("cannot write " + detail::quote_path(target) + ": cannot create a file in " +
                       detail::quote_path(directory) + " (" + detail::errno_text(reason) + ")");
      }
      write(static_cast<std::ostream&>(out));
      out.flush();
      if (!out) {
        const int reason = errno;
        throw io_error("cannot write " + detail::quote_path(target) + ": writing failed (" +
                       detail::errno_text(reason) + ")");
      }
      out.close();
      if (out.fail()) {
        const int reason = errno;
        throw io_error("cannot write " + detail::quote_path(target) + ": closing failed (" +
                       detail::errno_text(reason) + ")");
      }
    }
    detail::sync_file(file->guard.path());
    files_.push_back(std::move(file));
  }

  void add_text(const std::filesystem::path& target, std::string_view content) {
    add(target, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
  }

  // Renames every temporary file over its target, in the order added. A rename can still fail
  // (the disk, permissions): the io_error then names the targets already written.
  void commit() {
    std::string written;
    for (auto& file : files_) {
      std::error_code error;
      std::filesystem::rename(file->guard.path(), file->target, error);
      if (error)
        throw io_error("cannot write " + detail::quote_path(file->target) +
                       ": renaming the temporary file over it failed (" + error.message() + ")" +
                       (written.empty() ? std::string() : "; already written: " + written));
      file->guard.release();
      written += (written.empty() ? "" : ", ") + detail::quote_path(file->target);
    }
    files_.clear();
  }

  [[nodiscard]] std::size_t size() const noexcept { return files_.size(); }

 private:
  struct staged_file {
    explicit staged_file(std::filesystem::path path)
        : target(std::move(path)), guard(detail::temporary_path_for(target)) {}
    std::filesystem::path target;
    detail::temporary_file_guard guard;
  };
  std::vector<std::unique_ptr<staged_file>> files_;
};

// Calls write(stream) on a stream into a temporary file next to `target`, then renames it over
// `target`. Throws io_error naming the path when the directory is missing, the file cannot be
// created, written or renamed; an exception from `write` propagates unchanged. Either way no
// temporary file is left behind and an existing target is untouched.
template <class Writer>
requires std::invocable<Writer&, std::ostream&>
void write_file_atomically(const std::filesystem::path& target, Writer&& write) {
  atomic_file_group group;
  group.add(target, std::forward<Writer>(write));
  group.commit();
}

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files of writes in
// progress, then end the process as the signal would have. For programs (the gantry tool calls
// it first thing); a library never installs handlers on its own. Does nothing where there is no
// unlink().
inline void remove_temporary_files_on_signals() {
#ifdef GANTRY_IO_HAS_FSYNC
  (void)detail::live_temporaries();  // constructed now, not first inside a handler
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP})
    std::signal(signal_number, detail::remove_temporaries_and_reraise);
#endif
}

// Writes `content` to `target` atomically (see write_file_atomically).
inline void write_text_file(const std::filesystem::path& target, std::string_view content) {
  write_file_atomically(
      target, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

}  // namespace gantry
