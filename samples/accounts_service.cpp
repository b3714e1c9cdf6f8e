// accounts_service: bank accounts as sharded entities with durable state,
// right through a member's `kill -9` and another's leave on SIGTERM.
//
// This process is the client and the cluster's first seed; it hosts no
// entities. It starts three member processes (the same program,
// --ferry.node-name=member-N) that host the entity type "account", its
// state (a balance and the operations applied) kept in one database:
// an SQLite file by default, PostgreSQL with --store=postgresql:CONNINFO
// (docs/entities.md). The client opens 20 accounts with a deposit each, then
// makes 300 transfers between them, each a withdrawal and a deposit, each
// named by an operation id and asked again until it is answered. An
// account applies an operation once: asked again, it answers what it
// answered the first time (the id is in its saved state). A third of the
// way in, this process kills member-1 with SIGKILL (its accounts start on
// the others from their last save once it is downed); two thirds in, it
// sends member-2 SIGTERM (it leaves the cluster, its accounts saved and
// handed to the last member). At the end every balance must be what the
// client's own ledger says, and the money in all accounts what was
// deposited. Run: ./accounts_service [--store=LOCATION]
//
// The cluster runs with short intervals (heartbeats every 200 ms,
// unreachable members downed after 2 s, leases of 2 s) so that the sample
// ends in seconds; docs/cluster.md and docs/entities.md give the defaults.
#include "peer_process.hpp"

#include "ferry/entities.hpp"
#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int account_count = 20;
constexpr int transfer_count = 300;
constexpr int member_count = 3;
constexpr int64_t opening_balance = 1000;

using deposit_atom = caf::atom_constant<caf::atom("deposit")>;
using withdraw_atom = caf::atom_constant<caf::atom("withdraw")>;
using balance_atom = caf::atom_constant<caf::atom("balance")>;

/// An account: its balance and, per operation applied, whether it went
/// through (a withdrawal above the balance does not).
struct account {
  int64_t balance = 0;
  std::map<uint64_t, bool> applied;
};

/// Applies operation `op` (`amount` in or out) once, saves, and answers
/// whether it went through; an operation seen before answers as it did,
/// once a save holds it too (its first save may have failed: the client
/// asks again after an error, and the answer must mean "durable").
caf::result<bool> apply(ferry::entity<account>* self, uint64_t op,
                        int64_t amount) {
  auto& st = self->state();
  bool ok = false;
  if (auto i = st.applied.find(op); i != st.applied.end()) {
    ok = i->second;
  } else {
    ok = st.balance + amount >= 0;
    if (ok)
      st.balance += amount;
    st.applied.emplace(op, ok);
  }
  auto rp = self->make_response_promise<bool>();
  self->save([rp, ok](const caf::error& err) mutable {
    if (err)
      rp.deliver(err); // not durable: the client asks again
    else
      rp.deliver(ok);
  });
  return rp;
}

caf::behavior account_behavior(ferry::entity<account>* self) {
  return {
    [self](deposit_atom, uint64_t op, int64_t amount) {
      return apply(self, op, amount);
    },
    [self](withdraw_atom, uint64_t op, int64_t amount) {
      return apply(self, op, -amount);
    },
    [self](balance_atom) { return self->state().balance; },
  };
}

/// Sets the cluster's options: this node at `port`, the seed at
/// `seed_port`, short intervals, the accounts' database at `store`.
void join_settings(ferry::node_config& cfg, uint16_t port, uint16_t seed_port,
                   const std::string& store) {
  cfg.cluster.name = "accounts";
  cfg.cluster.address = "127.0.0.1:" + std::to_string(port);
  cfg.cluster.seeds = {"127.0.0.1:" + std::to_string(seed_port)};
  cfg.cluster.seed_timeout = 500ms;
  cfg.cluster.gossip_interval = 200ms;
  cfg.cluster.heartbeat_interval = 200ms;
  cfg.cluster.acceptable_pause = 600ms;
  cfg.cluster.stable_after = 2s;
  cfg.entities.store = store;
  cfg.entities.lease = 2s;
  cfg.entities.shards = 30;
  cfg.store_enabled = false;
}

// -- a member ----------------------------------------------------------------

/// A member process: hosts accounts until stdin closes or SIGTERM, when it
/// leaves the cluster (its node's end saves and hands off its accounts).
int run_member(ferry::node_config& cfg, uint16_t port) {
  cfg.add_entity_type<account>("account", account_behavior);
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "accounts_service: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  sample::serve_until_told(port);
  (*n)->cluster().leave();
  std::this_thread::sleep_for(1s); // the others see it leaving
  return 0;
}

// -- the client --------------------------------------------------------------

/// Asks `whom` until it answers (30 s at most); returns the answer.
template <class... Ts>
caf::expected<bool> ask(caf::scoped_actor& self, const caf::actor& whom,
                        Ts... xs) {
  caf::error last;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    caf::expected<bool> result{caf::make_error(caf::sec::request_timeout)};
    self->request(whom, 5s, xs...)
      .receive([&](bool ok) { result = ok; },
               [&](caf::error& err) { result = std::move(err); });
    if (result)
      return result;
    last = result.error();
    std::this_thread::sleep_for(100ms);
  }
  return last;
}

/// Waits up to 30 s until `n` sees `count` members up.
bool wait_for_members(ferry::node& n, size_t count) {
  for (int i = 0; i < 1500; ++i) {
    auto ms = n.cluster().members();
    auto up = std::count_if(ms.begin(), ms.end(), [](auto& m) {
      return m.status == ferry::member_status::up;
    });
    if (static_cast<size_t>(up) == count)
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

int run_client(ferry::node_config& cfg, const std::vector<std::string>& args,
               uint16_t port) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "accounts_service: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto& node = **n;
  std::vector<std::unique_ptr<sample::peer_process>> members;
  for (int i = 1; i <= member_count; ++i) {
    auto member_args = sample::peer_args(args, "member-" + std::to_string(i));
    member_args.push_back("--member-port=" +
                          std::to_string(sample::free_port()));
    member_args.push_back("--seed-port=" + std::to_string(port));
    members.push_back(std::make_unique<sample::peer_process>(member_args));
  }
  if (!wait_for_members(node, member_count + 1)) {
    std::cerr << "accounts_service: the members never came up\n";
    return 1;
  }
  std::cout << "accounts_service: " << member_count
            << " members host the accounts in " << cfg.entities.store << "\n";
  caf::scoped_actor self{node.system()};
  std::vector<caf::actor> accounts;
  for (int i = 0; i < account_count; ++i)
    accounts.push_back(
      *node.entities().ref("account", "acct-" + std::to_string(i)));
  // The client's own ledger: what each balance must be.
  std::vector<int64_t> ledger(account_count, 0);
  uint64_t op = 0;
  int failed = 0;
  auto fail = [&](const std::string& what, const caf::error& err) {
    std::cerr << "accounts_service: " << what << ": " << ferry::render(err)
              << '\n';
    ++failed;
  };
  for (int i = 0; i < account_count; ++i) {
    auto ok =
      ask(self, accounts[i], deposit_atom::value, ++op, opening_balance);
    if (!ok)
      fail("opening deposit", ok.error());
    else
      ledger[i] += opening_balance;
  }
  std::mt19937 rng{42};
  std::uniform_int_distribution<int> pick{0, account_count - 1};
  std::uniform_int_distribution<int64_t> amount{1, 400};
  int refused = 0;
  for (int t = 1; t <= transfer_count && failed == 0; ++t) {
    if (t == transfer_count / 3) {
      std::cout << "accounts_service: kill -9 member-1\n";
      ::kill(members[0]->pid(), SIGKILL);
    }
    if (t == 2 * transfer_count / 3) {
      std::cout << "accounts_service: SIGTERM to member-2 (it leaves)\n";
      ::kill(members[1]->pid(), SIGTERM);
    }
    auto from = pick(rng);
    auto to = pick(rng);
    auto x = amount(rng);
    // The withdrawal and the deposit are two operations (from and to may
    // be one account).
    auto id = ++op;
    auto out = ask(self, accounts[from], withdraw_atom::value, id, x);
    if (!out) {
      fail("withdrawal " + std::to_string(id), out.error());
      break;
    }
    if (!*out) {
      ++refused; // not enough money: nothing moves
      continue;
    }
    ledger[from] -= x;
    auto in = ask(self, accounts[to], deposit_atom::value, ++op, x);
    if (!in)
      fail("deposit " + std::to_string(op), in.error());
    else
      ledger[to] += x;
  }
  // Every balance as the ledger says, and the money all there.
  int64_t total = 0;
  int wrong = 0;
  for (int i = 0; i < account_count; ++i) {
    int64_t balance = -1;
    self->request(accounts[i], 30s, balance_atom::value)
      .receive([&](int64_t x) { balance = x; },
               [&](caf::error& err) { fail("balance", err); });
    total += balance;
    if (balance != ledger[i]) {
      std::cerr << "accounts_service: acct-" << i << " holds " << balance
                << ", the ledger says " << ledger[i] << '\n';
      ++wrong;
    }
  }
  auto deposited = int64_t{account_count} * opening_balance;
  std::cout << "accounts_service: " << transfer_count << " transfers ("
            << refused << " refused for want of money); " << account_count
            << " balances, " << account_count - wrong << " as the ledger says; "
            << total << " of " << deposited << " in the accounts" << std::endl;
  members.clear();
  return failed == 0 && wrong == 0 && total == deposited ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  // --member-port and --seed-port mark a member process, --store names the
  // database; the rest of the arguments are ferry's.
  std::vector<std::string> args;
  std::vector<char*> ferry_argv{argv[0]};
  uint16_t member_port = 0;
  uint16_t seed_port = 0;
  std::string store;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--member-port=", 0) == 0) {
      member_port = static_cast<uint16_t>(std::stoi(arg.substr(14)));
    } else if (arg.rfind("--seed-port=", 0) == 0) {
      seed_port = static_cast<uint16_t>(std::stoi(arg.substr(12)));
    } else if (arg.rfind("--store=", 0) == 0) {
      store = arg.substr(8);
      args.push_back(arg);
    } else {
      args.push_back(arg);
      ferry_argv.push_back(argv[i]);
    }
  }
  ferry::node_config cfg;
  if (auto err =
        cfg.parse(static_cast<int>(ferry_argv.size()), ferry_argv.data())) {
    std::cerr << "accounts_service: " << ferry::render(err) << '\n';
    return 2;
  }
  if (member_port != 0) {
    join_settings(cfg, member_port, seed_port, store);
    return run_member(cfg, member_port);
  }
  // The client picks the database (a fresh SQLite file unless told) and
  // hands it to the members.
  std::filesystem::path dir;
  if (store.empty()) {
    dir = std::filesystem::temp_directory_path() /
          ("accounts-service-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    store = "sqlite:" + (dir / "accounts.db").string();
    args.push_back("--store=" + store);
  }
  auto port = sample::free_port();
  join_settings(cfg, port, port, store);
  bool named = false;
  for (auto& arg : args)
    named |= arg.rfind("--ferry.node-name=", 0) == 0;
  if (!named)
    cfg.node_name = "client";
  auto rc = run_client(cfg, args, port);
  if (!dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return rc;
}
