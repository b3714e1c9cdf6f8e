// cup_and_spoon: by handle or by value, and what each costs.
//
// A Cup actor with a capacity lives in another process (this program started
// again as the "kitchen" node, where the Cup is spawned by name with
// `node::remote_spawn`) and is stirred by items sent from here:
//
//   - a silver spoon whose profile (2 MiB of doubles) is put into the host's
//     store *once*; every stir sends the spoon with a handle to that object
//     (`shared_array<double>`), and the Cup reads the profile in place;
//   - a wooden spoon with the same profile in a `std::vector<double>`, sent by
//     value: each stir encodes and copies the 2 MiB again (ferry moves frames
//     this large through the store, but still copies them every time);
//   - a fork, which cannot stir: the Cup answers with a typed error of its
//     own (`cup_errc::cannot_stir`), which travels back like any reply.
//
// The output shows each reply, the time per stir and the bytes each way put
// on the link, inline and spilled, from `node::stats()`.
// Run: ./cup_and_spoon
#include "peer_process.hpp"
#include "store_cleanup.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/object_store.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;

// -- the items ----------------------------------------------------------------

/// A spoon whose profile lives in the store; it travels as a handle.
struct silver_spoon {
  std::string name;
  ferry::store::shared_array<double> profile;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, profile);
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, silver_spoon& x) {
  return f(caf::meta::type_name("silver_spoon"), x.name, x.profile);
}

/// A spoon that carries its profile by value.
struct wooden_spoon {
  std::string name;
  std::vector<double> profile;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, profile);
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wooden_spoon& x) {
  return f(caf::meta::type_name("wooden_spoon"), x.name, x.profile);
}

/// Not a stirring tool.
struct table_fork {
  int32_t tines = 4;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, table_fork& x) {
  return f(caf::meta::type_name("table_fork"), x.tines);
}

// -- the Cup's error ----------------------------------------------------------

/// Errors of the Cup (category `cup`).
enum class cup_errc : uint8_t {
  /// Not an error.
  none = 0,
  /// The item has no bowl to stir with.
  cannot_stir,
};

} // namespace

CAF_ERROR_CODE_ENUM(cup_errc, "cup")

namespace {

void configure(ferry::node_config& cfg) {
  cfg.add_message_type<silver_spoon>("sample.silver_spoon");
  cfg.add_message_type<wooden_spoon>("sample.wooden_spoon");
  cfg.add_message_type<table_fork>("sample.table_fork");
  cfg.add_error_category(caf::atom("cup"), [](uint8_t code, caf::atom_value,
                                              const caf::message& ctx) {
    std::string name = code == static_cast<uint8_t>(cup_errc::cannot_stir)
                         ? "cannot_stir"
                         : std::to_string(code);
    auto text = ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
                                                  : std::string{};
    return "cup: " + name + ": " + text;
  });
}

// -- the Cup ------------------------------------------------------------------

double sum(std::span<const double> xs) {
  return std::accumulate(xs.begin(), xs.end(), 0.0);
}

caf::behavior cup(caf::stateful_actor<int>* self, int32_t capacity_ml) {
  auto label = "cup (" + std::to_string(capacity_ml) + " ml)";
  return {
    [=](const silver_spoon& x) {
      return label + " stirred #" + std::to_string(++self->state) + " by "
             + x.name + ": object " + to_string(x.profile.ref().id()) + ", "
             + std::to_string(x.profile.size()) + " points, sum "
             + std::to_string(sum(x.profile.span()));
    },
    [=](const wooden_spoon& x) {
      return label + " stirred #" + std::to_string(++self->state) + " by "
             + x.name + ": its own copy, " + std::to_string(x.profile.size())
             + " points, sum " + std::to_string(sum(x.profile));
    },
    [=](const table_fork& x) -> caf::result<std::string> {
      return caf::make_error(cup_errc::cannot_stir,
                             "a fork with " + std::to_string(x.tines)
                               + " tines has no bowl; the tea runs through "
                                 "and the "
                               + label + " stays unstirred");
    },
  };
}

int run_kitchen(ferry::node_config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "kitchen: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  // A node listens with a default actor; cups are spawned by name
  // (`remote_spawn`), so the default one only idles.
  auto idle = (*n)->system().spawn([]() -> caf::behavior {
    return {[](const std::string&) {}};
  });
  auto port = (*n)->publish(idle);
  if (!port) {
    std::cerr << "kitchen: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(idle, caf::exit_reason::user_shutdown);
  return 0;
}

// -- the table: this process --------------------------------------------------

struct way {
  explicit way(const char* name) : what(name) {}
  const char* what;
  int ok = 0;
  double us_per_stir = 0;
  uint64_t inline_bytes = 0;
  uint64_t spilled_bytes = 0;
  std::string last_reply;
};

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  configure(cfg);
  cfg.add_actor_type("cup", cup);
  constexpr int stirs = 20;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "cup_and_spoon: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.store_capacity = 64 << 20;
  if (cfg.node_name == "kitchen")
    return run_kitchen(cfg);
  cfg.node_name = "table";
  cfg.store_name = "ferry-sample-cup_and_spoon-" + std::to_string(getpid());
  sample::remove_store_at_exit cleanup{cfg.store_name};
  int rc = 1;
  {
    sample::peer_process kitchen{{"--ferry.node-name=kitchen",
                                  "--ferry.store.name=" + cfg.store_name}};
    auto n = ferry::node::start(cfg);
    if (!n) {
      std::cerr << ferry::render(n.error()) << '\n';
      return 1;
    }
    auto& table = **n;
    auto cup_proxy = table.remote_spawn("127.0.0.1", kitchen.port(), "cup",
                                        caf::make_message(int32_t{250}));
    if (!cup_proxy || table.store() == nullptr) {
      std::cerr << "cup_and_spoon: "
                << (cup_proxy ? "no store" : ferry::render(cup_proxy.error()))
                << '\n';
      return 1;
    }
    std::cout << "table (pid " << getpid() << ") spawned a 250 ml cup on the "
              << "kitchen node (pid " << kitchen.pid() << ")\n";
    // One profile, 2 MiB of doubles, for both spoons.
    std::vector<double> profile(256 * 1024);
    for (size_t i = 0; i < profile.size(); ++i)
      profile[i] = static_cast<double>(i % 1000) * 0.5;
    auto in_store = ferry::store::make_shared_array<double>(*table.store(),
                                                            profile);
    if (!in_store) {
      std::cerr << ferry::render(in_store.error()) << '\n';
      return 1;
    }
    std::cout << "the silver spoon's profile is put into the store once: "
              << to_string(in_store->ref()) << "\n\n";
    silver_spoon silver{"silver spoon", *in_store};
    wooden_spoon wooden{"wooden spoon", profile};
    caf::scoped_actor self{table.system()};
    // A stir counts when the Cup's reply shows it read the whole profile.
    auto expected = "sum " + std::to_string(sum(profile));
    auto stir = [&](way& w, const auto& item) {
      auto before = table.stats("kitchen");
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < stirs; ++i)
        self->request(*cup_proxy, 10s, item)
          .receive(
            [&](const std::string& reply) {
              if (reply.find(expected) != std::string::npos)
                ++w.ok;
              w.last_reply = reply;
            },
            [&](const caf::error& err) {
              w.last_reply = table.system().render(err);
            });
      auto elapsed = std::chrono::steady_clock::now() - start;
      auto after = table.stats("kitchen");
      w.us_per_stir = std::chrono::duration<double, std::micro>(elapsed).count()
                      / stirs;
      if (before && after) {
        w.inline_bytes = after->bytes_inline_sent - before->bytes_inline_sent;
        w.spilled_bytes = after->bytes_spilled_sent
                          - before->bytes_spilled_sent;
      }
      std::cout << w.what << ", " << stirs << " stirs; last reply:\n  "
                << w.last_reply << '\n';
    };
    way by_handle{"silver spoon by handle"};
    way by_value{"wooden spoon by value"};
    way refused{"fork"};
    stir(by_handle, silver);
    stir(by_value, wooden);
    stir(refused, table_fork{});
    std::cout << "\ncost per way (table -> kitchen, from node::stats()):\n";
    std::printf("  %-24s %8s %12s %14s %14s\n", "way", "stirred", "us/stir",
                "inline bytes", "spilled bytes");
    for (auto* w : {&by_handle, &by_value, &refused})
      std::printf("  %-24s %5d/%-2d %12.1f %14llu %14llu\n", w->what, w->ok,
                  stirs, w->us_per_stir,
                  static_cast<unsigned long long>(w->inline_bytes),
                  static_cast<unsigned long long>(w->spilled_bytes));
    auto summary = table.store()->memory_summary();
    auto objects = summary ? summary->objects.size() : 0;
    std::cout << "objects left in the store: " << objects
              << " (the silver spoon's profile; the wooden spoon's copies "
                 "were freed after each stir)\n";
    uint64_t profile_bytes = profile.size() * sizeof(double);
    auto same_object = "object " + to_string(in_store->ref().id());
    bool ok = by_handle.ok == stirs && by_handle.spilled_bytes == 0
              && by_handle.last_reply.find(same_object) != std::string::npos
              && by_handle.inline_bytes < uint64_t(stirs) * 4096
              && by_value.ok == stirs
              && by_value.spilled_bytes >= uint64_t(stirs) * profile_bytes
              && refused.ok == 0
              && refused.last_reply.find("cannot_stir") != std::string::npos
              && objects == 1;
    rc = ok ? 0 : 1;
    caf::anon_send_exit(*cup_proxy, caf::exit_reason::user_shutdown);
  }
  if (rc != 0)
    std::cout << "cup_and_spoon: the demonstration did not go as described\n";
  return rc;
}
