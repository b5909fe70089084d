// A type-erased executor backend: any_backend is an execution_backend (sim/event_loop.hpp) whose
// calls are virtual, so a program compiled by one compiler can drive a backend built in another
// translation unit by another (the gantry tool, compiled by g++, runs cuda_backend compiled by
// nvcc). backend_adaptor<B> holds a B and forwards to it. The executor sees any_backend as a
// measured backend, even around a virtual_clock: advance() and pop_due() are not erased.
#pragma once

#include <gantry/sim/event_loop.hpp>

#include <concepts>
#include <cstddef>
#include <utility>
#include <vector>

namespace gantry {

class any_backend {
 public:
  any_backend() = default;
  any_backend(const any_backend&) = delete;
  any_backend& operator=(const any_backend&) = delete;
  virtual ~any_backend() = default;

  virtual void begin(std::size_t devices) = 0;
  virtual void launch_vertex(const vertex_launch& v) = 0;
  virtual void launch_copy(const copy_launch& c) = 0;
  virtual void wait(std::vector<completion>& out) = 0;
  // Not const: the concept asks for now() on a mutable backend only, and a backend may need that.
  [[nodiscard]] virtual seconds now() = 0;
};

static_assert(execution_backend<any_backend>, "any_backend must be usable wherever a backend is");

template <execution_backend B>
class backend_adaptor final : public any_backend {
 public:
  // B is built in place (a backend is rarely movable: it owns threads or GPU contexts).
  template <class... Args>
  requires std::constructible_from<B, Args...>
  explicit backend_adaptor(Args&&... args) : backend_(std::forward<Args>(args)...) {}

  void begin(std::size_t devices) override { backend_.begin(devices); }
  void launch_vertex(const vertex_launch& v) override { backend_.launch_vertex(v); }
  void launch_copy(const copy_launch& c) override { backend_.launch_copy(c); }
  void wait(std::vector<completion>& out) override { backend_.wait(out); }
  [[nodiscard]] seconds now() override { return backend_.now(); }

  [[nodiscard]] B& get() noexcept { return backend_; }
  [[nodiscard]] const B& get() const noexcept { return backend_; }

 private:
  B backend_;
};

}  // namespace gantry
