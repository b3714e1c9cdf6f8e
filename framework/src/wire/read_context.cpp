// read_context: finding a node's landing places from a deserializer (see
// wire/read_context.hpp).
#include "wire/read_context.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/execution_unit.hpp>

namespace ferry::detail {

read_context::~read_context() = default;

read_context_binding::read_context_binding(read_context_slot& cfg,
                                           read_context* ctx)
  : cfg_(cfg) {
  cfg_.read_context_.store(ctx);
}

read_context_binding::~read_context_binding() {
  cfg_.read_context_.store(nullptr);
}

read_context* read_context_binding::bound(const read_context_slot& cfg) {
  return cfg.read_context_.load();
}

read_context* read_context_of(caf::deserializer& source) {
  auto* unit = source.context();
  if (unit == nullptr)
    return nullptr;
  auto* cfg = dynamic_cast<const read_context_slot*>(&unit->system().config());
  return cfg != nullptr ? read_context_binding::bound(*cfg) : nullptr;
}

} // namespace ferry::detail
