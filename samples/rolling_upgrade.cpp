// Rolling upgrade: two builds of this one source talk while a message type
// changes between them. ROLLING_UPGRADE_VERSION picks the build: version 1
// of `order` has an id and an item; version 2 adds a price (default 9.5)
// and widens the id. The version-2 build starts the version-1 build as a
// peer and sends it orders over links that send with one family each:
// cereal.binary, which the old build reads by the new build's shape (from
// the link's hello), and msgpack, which carries `order` by member name; in
// both the old build skips the price. Then over one that sends with caf
// only, which writes members by position and cannot bridge the two
// versions: that send is refused before anything is encoded, with an error
// naming the member that differs.
// docs/evolution.md has the rules.
//
// Run the version-2 build (rolling_upgrade_v2); it needs rolling_upgrade_v1
// beside it.
#include "peer_process.hpp"

#include "ferry/ferry.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <string>
#include <vector>

#if ROLLING_UPGRADE_VERSION == 1
struct order {
  static constexpr uint32_t ferry_version = 1;
  int32_t id = 0;
  std::string item;
};

std::string describe(const order& x) {
  return "order " + std::to_string(x.id) + " of " + x.item;
}
#else
struct order {
  static constexpr uint32_t ferry_version = 2;
  int64_t id = 0;
  std::string item;
  double price = 9.5;
};
#endif

namespace {

#if ROLLING_UPGRADE_VERSION == 1
/// Answers each order with what this build read of it.
caf::behavior shop() {
  return {[](const order& x) { return describe(x); }};
}

int serve(ferry::node_config& cfg) {
  auto node = ferry::node::start(cfg);
  if (!node) {
    std::cerr << "rolling_upgrade: " << ferry::render(node.error()) << '\n';
    return 1;
  }
  auto port = (*node)->publish((*node)->system().spawn(shop), 0, "127.0.0.1");
  if (!port) {
    std::cerr << "rolling_upgrade: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  return 0;
}
#endif

#if ROLLING_UPGRADE_VERSION == 2
/// Sends `x` to the version-1 shop with `family` and says what happened.
bool send_with(const std::string& family, const order& x, bool expect_refusal) {
  ferry::node_config cfg;
  cfg.add_message_type<order>("shop.order");
  cfg.node_name = "new-" + family;
  cfg.default_link.serializers = {family};
  auto node = ferry::node::start(cfg);
  if (!node) {
    std::cerr << "rolling_upgrade: " << ferry::render(node.error()) << '\n';
    return false;
  }
  sample::peer_process old_build{ROLLING_UPGRADE_V1,
                                 {"--ferry.node-name=old"}};
  auto shop = (*node)->remote_actor("127.0.0.1", old_build.port());
  if (!shop) {
    std::cerr << "rolling_upgrade: " << ferry::render(shop.error()) << '\n';
    return false;
  }
  caf::scoped_actor self{(*node)->system()};
  bool ok = false;
  self->request(*shop, std::chrono::seconds{10}, x)
    .receive(
      [&](const std::string& seen) {
        std::cout << family << ": the old build read \"" << seen << "\"\n";
        ok = !expect_refusal;
      },
      [&](const caf::error& err) {
        std::cout << family << ": refused: " << ferry::render(err) << "\n";
        ok = expect_refusal && err == caf::make_error(ferry::errc::type_mismatch,
                                                      err.context());
      });
  return ok;
}
#endif

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  cfg.add_message_type<order>("shop.order");
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "rolling_upgrade: " << ferry::render(err) << '\n';
    return 2;
  }
#if ROLLING_UPGRADE_VERSION == 1
  return serve(cfg);
#else
  order x{42, "teapot", 12.5};
  // cereal.binary: the old build reads the bytes by the new build's shape.
  bool binary = send_with("cereal.binary", x, false);
  // msgpack carries order by member name.
  bool by_name = send_with("msgpack", x, false);
  // caf writes members by position: refused before encoding.
  bool refused = send_with("caf", x, true);
  return binary && by_name && refused ? 0 : 1;
#endif
}
