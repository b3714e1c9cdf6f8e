// Must not compile: ferry names the member type and the fix.
#include "ferry/serializers/registry.hpp"
#include <thread>

struct holder {
  int id = 0;
  std::vector<int> values;
  std::thread worker;
};

int main() {
  ferry::serializers::registry reg;
  reg.add_type<holder>("holder");
}
