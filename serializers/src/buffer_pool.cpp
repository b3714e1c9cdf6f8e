#include "ferry/serializers/detail/buffer_pool.hpp"

#include "ferry/serializers/detail/thread_safety.hpp"

#include <atomic>
#include <memory>

namespace ferry::serializers::detail {

namespace {

constexpr size_t min_pooled = 64 * 1024;
constexpr size_t max_buffers = 8;
constexpr size_t max_pooled_bytes = size_t{256} << 20;

struct pool {
  mutex mtx;
  std::vector<std::vector<std::byte>> buffers FERRY_GUARDED_BY(mtx);
  size_t bytes FERRY_GUARDED_BY(mtx) = 0;
  /// `buffers.size()`, written under `mtx`, read without it: a thread
  /// finds the pool empty without taking the lock.
  std::atomic<size_t> count{0};
};

pool& the_pool() {
  // Leaked on purpose: frames may die during static destruction.
  static pool* instance = new pool;
  return *instance;
}

void give_back(std::vector<std::byte>&& buf) {
  auto cap = buf.capacity();
  if (cap < min_pooled || cap > max_pooled_bytes)
    return;
  auto& p = the_pool();
  lock_guard guard{p.mtx};
  if (p.buffers.size() >= max_buffers || p.bytes + cap > max_pooled_bytes)
    return;
  buf.clear();
  p.bytes += cap;
  p.buffers.push_back(std::move(buf));
  p.count.store(p.buffers.size(), std::memory_order_relaxed);
}

/// The small buffer the calling thread recycled last.
std::vector<std::byte>& thread_spare() {
  thread_local std::vector<std::byte> spare;
  return spare;
}

} // namespace

std::vector<std::byte> take_buffer() {
  // A large pooled buffer first (a large encode then writes into mapped
  // memory), else the thread's small one.
  auto& p = the_pool();
  if (p.count.load(std::memory_order_relaxed) == 0)
    return std::move(thread_spare());
  lock_guard guard{p.mtx};
  if (p.buffers.empty())
    return std::move(thread_spare());
  auto result = std::move(p.buffers.back());
  p.buffers.pop_back();
  p.count.store(p.buffers.size(), std::memory_order_relaxed);
  p.bytes -= result.capacity();
  return result;
}

void recycle_buffer(std::vector<std::byte>&& bytes) {
  auto cap = bytes.capacity();
  if (cap >= min_pooled) {
    give_back(std::move(bytes));
    return;
  }
  if (auto& spare = thread_spare(); cap > spare.capacity()) {
    bytes.clear();
    spare = std::move(bytes);
  }
}

frame pooled_frame(std::vector<std::byte> bytes) {
  if (bytes.capacity() < min_pooled)
    return frame{std::move(bytes)};
  auto owner = std::shared_ptr<std::vector<std::byte>>(
    new std::vector<std::byte>(std::move(bytes)),
    [](std::vector<std::byte>* buf) {
      give_back(std::move(*buf));
      delete buf;
    });
  std::span<const std::byte> view{owner->data(), owner->size()};
  return frame::view(view, std::move(owner));
}

} // namespace ferry::serializers::detail
