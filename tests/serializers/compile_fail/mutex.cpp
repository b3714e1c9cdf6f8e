// Must not compile: ferry names the member type and the fix.
#include "ferry/serializers/registry.hpp"
#include <mutex>

struct holder {
  int id = 0;
  std::vector<int> values;
  std::mutex lock;
};

int main() {
  ferry::serializers::registry reg;
  reg.add_type<holder>("holder");
}
