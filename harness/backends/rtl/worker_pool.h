// A fork-join pool for the chip RTL's phases (linked_qpes.h): every NoC clock evaluates the awake QPEs twice
// (settle, clock edge), each QPE's Verilated model on its own, so any thread may evaluate any QPE and the
// result cannot depend on which did (each model has its own context and state; nothing else is written).
// The phases are a few microseconds apart, so a worker spins between them before it sleeps (a futex wake-up
// per phase would cost more than the phase).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace s2 {

class WorkerPool {
 public:
  // `threads` in all, the caller's included (1: no worker, everything on the caller)
  explicit WorkerPool(int threads) {
    for (int k = 1; k < std::max(threads, 1); ++k) workers_.emplace_back([this] { work(); });
  }
  ~WorkerPool() {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& w : workers_) w.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // f(i) for every i in [0, n), each once, on the caller and the workers; returns when all are done. Every
  // worker checks in for every call (so the next call's job is never read by one still in this one). An
  // exception from f is rethrown here (the first; the rest of the items still run).
  template <typename F>
  void for_each(int n, F&& f) {
    if (workers_.empty() || n <= 1) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    job_ = [](void* ctx, int i) { (*static_cast<F*>(ctx))(i); };
    ctx_ = &f;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    checked_in_.store(0, std::memory_order_relaxed);
    error_taken_.store(false, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    claim();
    const int want = static_cast<int>(workers_.size());
    for (std::uint32_t spins = 0; checked_in_.load(std::memory_order_acquire) != want; ++spins) pause(spins);
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  static void pause(std::uint32_t spins) {
#if defined(__x86_64__) || defined(__i386__)
    if (spins < kSpins) {
      _mm_pause();
      return;
    }
#endif
    (void)spins;
    std::this_thread::yield();
  }
  void claim() {
    for (int i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) {
      try {
        job_(ctx_, i);
      } catch (...) {
        bool expected = false;
        if (error_taken_.compare_exchange_strong(expected, true)) error_ = std::current_exception();
      }
    }
  }
  void work() {
    std::uint32_t seen = 0;  // the generation the pool began with: a worker that starts late still sees the first call
    while (true) {
      std::uint32_t g;
      for (std::uint32_t spins = 0; (g = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
        if (spins < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
          _mm_pause();
#endif
        } else {
          generation_.wait(seen, std::memory_order_acquire);
        }
      }
      seen = g;
      if (stop_.load(std::memory_order_relaxed)) return;
      claim();
      checked_in_.fetch_add(1, std::memory_order_release);
    }
  }

  static constexpr std::uint32_t kSpins = 1u << 12;  // some tens of microseconds of pause instructions, then sleep (or yield)
  std::vector<std::thread> workers_;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> next_{0};
  std::atomic<int> checked_in_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> error_taken_{false};
  std::exception_ptr error_;
  void (*job_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
};

}  // namespace s2
