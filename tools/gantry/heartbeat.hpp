// A long command says where it stands: once it has run 2 s, every 2 s a line on stderr naming the
// command, the time so far and what it is doing, terminal or not, so that a search, a solver or a
// training run that takes minutes is never silent (a log shows it alive, and what it was doing).
#pragma once

#include "options.hpp"

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

namespace gantry::cli {

class heartbeat {
 public:
  // `command` names the command ("compare"), `what` what it does first ("placing with m-etf").
  // Lines go to std::cerr, which other threads may write too (each write is whole, not torn).
  heartbeat(std::string command, std::string what, seconds interval = 2)
      : command_(std::move(command)),
        what_(std::move(what)),
        interval_(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval))),
        started_(clock::now()),
        thread_([this](std::stop_token stop) { beat(stop); }) {}
  heartbeat(const heartbeat&) = delete;
  heartbeat& operator=(const heartbeat&) = delete;
  ~heartbeat() = default;  // the thread is asked to stop and joined before the members go

  // What the command does from now on (the next line says it); empty: nothing to say, while a
  // part that reports itself (local search) runs.
  void set(std::string what) {
    const std::lock_guard lock(mutex_);
    what_ = std::move(what);
  }

 private:
  using clock = std::chrono::steady_clock;

  void beat(const std::stop_token& stop) {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, stop, interval_, [] { return false; }) && !stop.stop_requested()) {
      if (what_.empty()) continue;
      const double elapsed = std::chrono::duration<double>(clock::now() - started_).count();
      std::cerr << "gantry " << command_ << ": " << fixed_text(elapsed, 0) << " s, " << what_ << "\n" << std::flush;
    }
  }

  std::string command_;
  std::string what_;
  clock::duration interval_;
  clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: starts when the rest is ready, joined first
};

}  // namespace gantry::cli
