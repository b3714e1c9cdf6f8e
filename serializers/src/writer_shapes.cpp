// The shapes another build writes its types with (see writer_shapes.hpp).
#include "ferry/serializers/writer_shapes.hpp"

namespace ferry::serializers {

bool writer_shapes::add(std::string type_name, std::string shape) {
  auto text = std::make_unique<const std::string>(std::move(shape));
  auto tree = detail::parse_shape(*text);
  if (!tree || !tree->record)
    return false;
  entries_.insert_or_assign(std::move(type_name),
                            entry{std::move(text), std::move(*tree)});
  return true;
}

const detail::shape_node*
writer_shapes::find(std::string_view type_name) const noexcept {
  auto i = entries_.find(type_name);
  return i == entries_.end() ? nullptr : &i->second.tree;
}

} // namespace ferry::serializers
