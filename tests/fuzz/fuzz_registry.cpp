// The fuzz targets' shared registry (fuzz_types.hpp): registering a type
// instantiates every built-in family for it, so it is compiled once here and
// linked into each target.

#include "fuzz_types.hpp"

namespace ferry::serializers::fuzz {

registry& fuzz_registry() {
  static registry* reg = [] {
    auto r = new registry;
    r->add_type<common>("common");
    r->add_type<cereal_value>("cereal_value");
    r->add_type<msgpack_value>("msgpack_value");
    r->add_type<tree>("tree");
    r->add_type<sample>("sample");
    r->add_type<std::vector<sample>>("samples");
    r->add_type<std::vector<double>>("doubles");
    r->add_type<std::vector<std::byte>>("bytes");
    r->add_type<std::string>("string");
    return r;
  }();
  return *reg;
}

} // namespace ferry::serializers::fuzz
