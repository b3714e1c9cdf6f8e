#include "ferry/store/import_scope.hpp"

#include "ferry/store/errc.hpp"

#include <string>

namespace ferry::store {

namespace {

thread_local import_scope* current_scope = nullptr;

} // namespace

import_scope::import_scope(uint64_t foreign_token, others other_stores)
  : token_(foreign_token),
    others_(other_stores),
    previous_(current_scope) {
  current_scope = this;
}

import_scope::~import_scope() {
  current_scope = previous_;
}

void import_scope::add(object_id foreign, object_ref local) {
  for (auto& [id, ref] : objects_)
    if (id == foreign) {
      ref = std::move(local);
      return;
    }
  objects_.emplace_back(foreign, std::move(local));
}

const import_scope* import_scope::find(uint64_t token) noexcept {
  for (auto* scope = current_scope; scope != nullptr;
       scope = scope->previous_) {
    if (scope->token_ == token)
      return scope;
    if (scope->others_ == others::refuse)
      return nullptr;
  }
  return nullptr;
}

const import_scope* import_scope::exclusive() noexcept {
  for (auto* scope = current_scope; scope != nullptr; scope = scope->previous_)
    if (scope->others_ == others::refuse)
      return scope;
  return nullptr;
}

caf::expected<object_ref> import_scope::resolve(object_id foreign) const {
  for (auto& [id, ref] : objects_)
    if (id == foreign)
      return ref;
  return caf::make_error(
    errc::object_not_found,
    "a serialized object_ref names object " + to_string(foreign) +
      " of another host's store (token " + std::to_string(token_) +
      "), but the message carried no copy of it; handles to another "
      "host's objects only resolve inside the message that transferred "
      "them");
}

} // namespace ferry::store
