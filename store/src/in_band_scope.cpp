#include "ferry/store/in_band_scope.hpp"

#include "ferry/store/object_store.hpp"

#include <utility>

namespace ferry::store {

namespace {

thread_local in_band_scope* current_scope = nullptr;

} // namespace

in_band_scope::in_band_scope(const object_store& store)
  : store_(store.impl()),
    previous_(current_scope) {
  current_scope = this;
}

in_band_scope::~in_band_scope() {
  current_scope = previous_;
}

std::vector<transfer_ticket> in_band_scope::take_tickets() noexcept {
  return std::exchange(tickets_, {});
}

in_band_scope* in_band_scope::current() noexcept {
  return current_scope;
}

void in_band_scope::add(const transfer_ticket& ticket) {
  tickets_.push_back(ticket);
}

} // namespace ferry::store
