// per_link_families: three nodes, one config file, a family per link.
//
// node-a (this process) starts node-b and node-c as child processes; all
// three read per_link_families.ini. node-a talks portable binary to node-b
// and msgpack to node-c, at the same time; node-c refuses cereal.binary, so
// a type only cereal.binary could encode cannot go to node-c, and ferry says
// why. Run: ./per_link_families [--config-file=per_link_families.ini]
#include "peer_process.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <map>
#include <msgpack.hpp>
#include <string>

namespace {

using namespace std::chrono_literals;

/// An order, encodable by cereal (serialize), msgpack (MSGPACK_DEFINE) and
/// CAF (inspect).
struct order {
  int64_t id = 0;
  std::string item;
  std::map<std::string, int32_t> options;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, item, options);
  }

  MSGPACK_DEFINE(id, item, options)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, order& x) {
  return f(caf::meta::type_name("order"), x.id, x.item, x.options);
}

/// A legacy type with only a cereal serialize function (no msgpack, no
/// inspect): among the families node-c accepts, none can encode it.
class legacy_blob {
public:
  legacy_blob() = default;
  explicit legacy_blob(std::string text) : text_(std::move(text)) {}

  template <class Archive>
  void serialize(Archive& ar) {
    ar(text_);
  }

private:
  std::string text_;
};

} // namespace

// Not an aggregate and no inspect function: CAF 0.17 puts it into a message
// only when it is marked (docs/limits.md). `order` needs no mark.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(legacy_blob)

namespace {

void register_types(ferry::node_config& cfg) {
  cfg.add_message_type<order>("sample.order");
  cfg.add_message_type<legacy_blob>("sample.legacy_blob");
}

caf::behavior kitchen(std::string name) {
  return {
    [name](const order& x) {
      return name + " accepted order " + std::to_string(x.id) + " (" + x.item
             + ")";
    },
    [name](const legacy_blob&) { return name + " got a legacy blob"; },
  };
}

int run_peer(ferry::node_config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto worker = (*n)->system().spawn(kitchen, cfg.node_name);
  auto port = (*n)->publish(worker);
  if (!port) {
    std::cerr << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  return 0;
}

std::string join(const std::vector<std::string>& xs) {
  std::string result;
  for (auto& x : xs)
    result += (result.empty() ? "" : ", ") + x;
  return "[" + result + "]";
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  register_types(cfg);
  std::string config_file = FERRY_SAMPLE_DIR "/per_link_families.ini";
  std::vector<std::string> args{argv + 1, argv + argc};
  bool has_config = false;
  for (auto& arg : args)
    has_config = has_config || arg.rfind("--config-file=", 0) == 0;
  if (!has_config)
    args.push_back("--config-file=" + config_file);
  if (auto err = cfg.parse(args)) {
    std::cerr << "per_link_families: " << ferry::render(err) << '\n';
    return 2;
  }
  if (cfg.node_name == "node-b" || cfg.node_name == "node-c")
    return run_peer(cfg);
  // This process is node-a; start the others with the same config file
  // and options.
  cfg.node_name = "node-a";
  sample::peer_process b{sample::peer_args(args, "node-b")};
  sample::peer_process c{sample::peer_args(args, "node-c")};
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto to_b = (*n)->remote_actor("127.0.0.1", b.port());
  auto to_c = (*n)->remote_actor("127.0.0.1", c.port());
  if (!to_b || !to_c) {
    std::cerr << ferry::render(to_b ? to_c.error() : to_b.error()) << '\n';
    return 1;
  }
  caf::scoped_actor self{(*n)->system()};
  int failures = 0;
  auto ask = [&](const caf::actor& whom, auto msg, const char* what) {
    self->request(whom, 10s, std::move(msg))
      .receive([&](const std::string& reply) {
                 std::cout << "  " << what << ": " << reply << '\n';
               },
               [&](const caf::error& err) {
                 ++failures;
                 std::cout << "  " << what << ": refused\n    "
                           << ferry::render(err) << '\n';
               });
  };
  std::cout << "node-a sends orders to node-b and node-c at once:\n";
  ask(*to_b, order{1, "soup", {{"spicy", 1}}}, "order 1 -> node-b");
  ask(*to_c, order{2, "bread", {{"sliced", 1}}}, "order 2 -> node-c");
  std::cout << "node-a sends a legacy blob that only cereal can encode:\n";
  ask(*to_c, legacy_blob{"old bytes"}, "legacy blob -> node-c");
  std::cout << "\nwhich family each link used (node-a's link stats):\n";
  for (auto& s : (*n)->stats()) {
    std::cout << "  node-a -> " << s.peer << ": may send with "
              << join(s.send_families) << "; sent";
    for (auto& [family, count] : s.sent_by_family)
      std::cout << ' ' << count << " x " << family;
    std::cout << '\n';
  }
  // The refusal above is the point of the demo: exactly one is expected.
  return failures == 1 ? 0 : 1;
}
