// Must not compile: ferry names the member type and the fix.
#include "ferry/serializers/registry.hpp"


struct holder {
  int id = 0;
  std::vector<int> values;
  int* counter = nullptr;
};

int main() {
  ferry::serializers::registry reg;
  reg.add_type<holder>("holder");
}
