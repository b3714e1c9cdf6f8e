// writer_shapes: the shapes another build writes its types with.
//
// cereal.binary and cereal.portable write a record's members in order,
// without names. When two builds register one type name with different
// shapes that bridge (`shapes_bridge`), the reader walks the bytes by the
// writer's shape: it reads the members it has, skips the others, and leaves
// members the writer lacks at their defaults (detail/cereal_resolve.hpp).
// A link fills one `writer_shapes` from the peer's hello and passes it in
// `decode_options::writer_shapes`; types not in it are read by this build's
// own shape.
//
// Thread-safety: filled by one thread, then immutable; any thread may read
// a filled one.
#pragma once

#include "ferry/serializers/detail/shape_tree.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace ferry::serializers {

class writer_shapes {
public:
  writer_shapes() = default;
  writer_shapes(const writer_shapes&) = delete;
  writer_shapes& operator=(const writer_shapes&) = delete;

  /// Records that the writer writes the type registered as `type_name` with
  /// shape `shape` (untrusted: parsed with shape.hpp's bounds). Returns false,
  /// recording nothing, when `shape` is malformed or not a record.
  bool add(std::string type_name, std::string shape);

  /// The writer's shape of `type_name`, or null when it has none here.
  [[nodiscard]] const detail::shape_node*
  find(std::string_view type_name) const noexcept;

  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

private:
  struct entry {
    /// The text the tree's views point into (on the heap: never moves).
    std::unique_ptr<const std::string> text;
    detail::shape_node tree;
  };

  std::map<std::string, entry, std::less<>> entries_;
};

} // namespace ferry::serializers
