// libFuzzer target: the cluster's gossip as another member sends it
// (framework/src/cluster/gossip.hpp). The input is the encoded view.
// Decoding must refuse anything malformed with an error and never crash or
// allocate beyond the bounds; what it takes must be canonical (encoding it
// again gives the input byte for byte), and merging it with itself or with a
// fixed view of this node must agree in either order.
#include "cluster/gossip.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace {

using namespace ferry::detail::cluster;

gossip local_view() {
  gossip g;
  g.members.push_back({"10.0.0.1:4000", 1, member_state::up, 1});
  g.members.push_back({"10.0.0.2:4000", 2, member_state::joining, 0});
  g.reachability.push_back({1, 2, false, 1});
  g.version[1] = 3;
  g.seen.insert(1);
  return g;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::span{reinterpret_cast<const std::byte*>(data), size};
  auto g = decode(bytes);
  if (!g)
    return 0;
  std::vector<std::byte> again;
  encode(*g, again);
  if (again.size() != size
      || !std::equal(again.begin(), again.end(), bytes.begin()))
    std::abort();
  auto self = merge(*g, *g);
  auto twice = merge(self, *g);
  if (!(twice == self))
    std::abort();
  auto local = local_view();
  if (!(merge(*g, local) == merge(local, *g)))
    std::abort();
  return 0;
}
