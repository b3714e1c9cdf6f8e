#include "test_types.hpp"

namespace ferry::test {

void register_test_types(node_config& cfg) {
  cfg.add_message_type<record>("test.record");
  cfg.add_message_type<cereal_only>("test.cereal_only");
  cfg.add_message_type<store::shared_array<double>>("test.f64_array");
  cfg.add_message_type<array_pair>("test.array_pair");
  cfg.add_message_type<crew>("test.crew");
  cfg.add_message_type<badge>("test.badge");
  cfg.add_message_type<labelled_array>("test.labelled_array");
  cfg.add_message_type<store::parked_ref>("test.parked_ref");
  cfg.add_message_type<plain_point>("test.plain_point");
  cfg.add_message_type<inspected_only>("test.inspected_only");
}

} // namespace ferry::test
