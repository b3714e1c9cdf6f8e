// custom_serialization: a type holding a std::mutex, and four ways to send it.
//
// `bank::account` keeps its data behind a mutex and is shared by pointer
// (`std::shared_ptr<account>`) between the actors of one process. Sending it
// to another process fails: no family can send a lock. ferry says so at run
// time, naming the member and the fix, and `inspect_serializability<T>()`
// gives the same finding member by member. (Passing a type with a mutex
// member to `registry::encode` or `add_message_type` directly does not even
// compile: a static_assert names the mutex and the fixes. The pointer is how
// such a type is passed around, so here the finding comes at run time.)
//
// Then each of the four ways makes it work:
//   (a) the type's own serialize, which leaves the lock out;
//   (b) `registry::register_serializer<T>(to, from)` at run time, for a type
//       one cannot change (deregistering makes it fail again);
//   (c) the per-value wrapper `serializers::wrap<Codec>(x)`;
//   (d) a plain aggregate of the data alone, encoded field by field with no
//       code of yours.
// This process ("teller") sends to an actor in a second process ("bank"),
// which is this program started again. Run: ./custom_serialization
#include "peer_process.hpp"
#include "store_cleanup.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/serializers/diagnostics.hpp"
#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/wrap.hpp"

#include "ferry/store/object_store.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include <unistd.h>

namespace bank {

/// An account as the program keeps it: data plus the lock that guards it.
struct account {
  std::string owner;
  int64_t balance = 0;
  std::mutex lock;
};

using account_ptr = std::shared_ptr<account>;

/// (a) The same account with its own serialize: it writes the data and leaves
/// the lock out (the receiver's copy gets a fresh, unlocked mutex).
struct account_with_serialize {
  std::string owner;
  int64_t balance = 0;
  std::mutex lock;

  template <class Archive>
  void serialize(Archive& ar) {
    std::lock_guard guard{lock};
    ar(owner, balance);
  }
};

using serializable_ptr = std::shared_ptr<account_with_serialize>;

/// (d) The data alone: a plain aggregate, encoded field by field. Also the
/// stand-in of (b) and (c).
struct account_data {
  std::string owner;
  int64_t balance = 0;
};

/// Takes a consistent snapshot of `x` under its lock.
account_data to_data(const account_ptr& x) {
  std::lock_guard guard{x->lock};
  return {x->owner, x->balance};
}

/// Builds a new account (with a fresh mutex) from a snapshot.
account_ptr from_data(account_data x) {
  auto result = std::make_shared<account>();
  result->owner = std::move(x.owner);
  result->balance = x.balance;
  return result;
}

/// (c) A codec for `serializers::wrap`: the same conversion, per value.
struct account_codec {
  static account_data to(const account_ptr& x) { return to_data(x); }
  static account_ptr from(account_data x) { return from_data(std::move(x)); }
};

using wrapped_account = ferry::serializers::wrapped<account_ptr, account_codec>;

} // namespace bank

// CAF 0.17 puts a smart pointer into a message only when it is marked (it
// then holds it without serializing it; ferry encodes it with the link's
// family). account_data, a plain aggregate, needs no mark: see
// docs/limits.md, "When a message type needs CAF_ALLOW_UNSAFE_MESSAGE_TYPE".
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(bank::account_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(bank::serializable_ptr)

namespace {

using namespace std::chrono_literals;

void register_types(ferry::node_config& cfg) {
  cfg.add_message_type<bank::account_ptr>("bank.account_ptr");
  cfg.add_message_type<bank::serializable_ptr>("bank.serializable_ptr");
  cfg.add_message_type<bank::wrapped_account>("bank.wrapped_account");
  cfg.add_message_type<bank::account_data>("bank.account_data");
}

std::string show(const std::string& owner, int64_t balance) {
  return owner + " has " + std::to_string(balance);
}

caf::behavior bank_actor() {
  return {
    [](const bank::account_ptr& x) {
      std::lock_guard guard{x->lock};
      return "bank got an account: " + show(x->owner, x->balance);
    },
    [](const bank::serializable_ptr& x) {
      std::lock_guard guard{x->lock};
      return "bank got an account_with_serialize: "
             + show(x->owner, x->balance);
    },
    [](const bank::wrapped_account& x) {
      std::lock_guard guard{x.value()->lock};
      return "bank got a wrapped account: "
             + show(x.value()->owner, x.value()->balance);
    },
    [](const bank::account_data& x) {
      return "bank got account_data: " + show(x.owner, x.balance);
    },
  };
}

int run_bank(ferry::node_config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "bank: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  // (b) on the receiving side: decode the stand-in back into an account.
  (*n)->registry().register_serializer<bank::account_ptr>(&bank::to_data,
                                                          &bank::from_data);
  auto teller = (*n)->system().spawn(bank_actor);
  auto port = (*n)->publish(teller);
  if (!port) {
    std::cerr << "bank: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(teller, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  register_types(cfg);
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "custom_serialization: " << ferry::render(err) << '\n';
    return 2;
  }
  cfg.store_capacity = 8 << 20;
  if (cfg.node_name == "bank")
    return run_bank(cfg);
  cfg.node_name = "teller";
  cfg.store_name = "ferry-sample-custom_serialization-"
                   + std::to_string(getpid());
  sample::remove_store_at_exit cleanup{cfg.store_name};
  std::string outcomes;
  {
    sample::peer_process bank_process{
      {"--ferry.node-name=bank", "--ferry.store.name=" + cfg.store_name}};
    auto n = ferry::node::start(cfg);
    if (!n) {
      std::cerr << ferry::render(n.error()) << '\n';
      return 1;
    }
    auto to_bank = (*n)->remote_actor("127.0.0.1", bank_process.port());
    if (!to_bank) {
      std::cerr << ferry::render(to_bank.error()) << '\n';
      return 1;
    }
    caf::scoped_actor self{(*n)->system()};
    // Sends `x`, prints the reply or the error; records '+' for a reply
    // with the account's data, '?' for a reply without, '-' for an error.
    auto send = [&](const char* what, auto x) {
      std::cout << what << ":\n";
      self->request(*to_bank, 10s, std::move(x))
        .receive(
          [&](const std::string& reply) {
            bool intact = reply.find("alice has 120") != std::string::npos
                          || reply.find("bob has 75") != std::string::npos;
            outcomes += intact ? '+' : '?';
            std::cout << (intact ? "  ok: " : "  WRONG DATA: ") << reply
                      << '\n';
          },
          [&](const caf::error& err) {
            outcomes += '-';
            std::cout << "  refused: " << ferry::render(err) << '\n';
          });
    };
    auto alice = std::make_shared<bank::account>();
    alice->owner = "alice";
    alice->balance = 120;

    std::cout << "inspect_serializability<bank::account>():\n"
              << ferry::serializers::inspect_serializability<bank::account>()
                   .to_string()
              << '\n';
    send("0. send std::shared_ptr<account> as it is", alice);

    auto bob = std::make_shared<bank::account_with_serialize>();
    bob->owner = "bob";
    bob->balance = 75;
    send("\n(a) the type's own serialize, leaving the lock out", bob);

    auto& registry = (*n)->registry();
    registry.register_serializer<bank::account_ptr>(&bank::to_data,
                                                    &bank::from_data);
    send("\n(b) register_serializer<account_ptr>(to_data, from_data)", alice);
    registry.deregister_serializer<bank::account_ptr>();
    send("\n(b') after deregister_serializer<account_ptr>()", alice);

    send("\n(c) serializers::wrap<account_codec>(alice)",
         ferry::serializers::wrap<bank::account_codec>(alice));

    send("\n(d) a plain aggregate of the data: account_data{owner, balance}",
         bank::to_data(alice));

    if (auto stats = (*n)->stats("bank")) {
      std::cout << "\nfamilies used on the link to bank:";
      for (auto& [family, count] : stats->sent_by_family)
        std::cout << ' ' << count << " x " << family;
      std::cout << '\n';
    }
  }
  // Expected: refused, (a) ok, (b) ok, refused again, (c) ok, (d) ok.
  auto report = ferry::serializers::inspect_serializability<bank::account>();
  bool names_lock = report.to_string().find("lock") != std::string::npos;
  std::cout << "\ncustom_serialization: outcomes " << outcomes
            << " (expected -++-++)\n";
  return outcomes == "-++-++" && names_lock && !report.serializable() ? 0 : 1;
}
