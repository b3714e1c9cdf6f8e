// The thread's held elements (see delivery_batch.hpp).
#include "link/delivery_batch.hpp"

#include <utility>
#include <vector>

namespace ferry::detail {

namespace {

struct held_element {
  caf::strong_actor_ptr target;
  caf::mailbox_element_ptr element;
  caf::execution_unit* host;
};

struct thread_batch {
  bool open = false;
  /// Kept between scopes: its capacity is the batch size seen so far.
  std::vector<held_element> held;
};

thread_local thread_batch batch;

} // namespace

delivery_batch::delivery_batch() : outer_(!batch.open) {
  batch.open = true;
}

delivery_batch::~delivery_batch() {
  if (!outer_)
    return;
  flush();
  batch.open = false;
}

bool delivery_batch::open() noexcept {
  return batch.open;
}

void delivery_batch::post(const caf::strong_actor_ptr& target,
                          caf::mailbox_element_ptr element,
                          caf::execution_unit* host) {
  if (!batch.open) {
    target->enqueue(std::move(element), host);
    return;
  }
  batch.held.push_back(held_element{target, std::move(element), host});
}

void delivery_batch::flush() {
  // Taken out first: a post made while enqueueing goes to the thread's list
  // and is enqueued by the next round, not into the list this loop walks.
  while (!batch.held.empty()) {
    auto held = std::move(batch.held);
    batch.held.clear();
    for (auto& x : held)
      x.target->enqueue(std::move(x.element), x.host);
    held.clear();
    if (batch.held.empty())
      batch.held = std::move(held); // keeps the capacity
  }
}

} // namespace ferry::detail
