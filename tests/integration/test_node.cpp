// Peer process for the integration tests: a ferry node that publishes an echo
// actor, exposes a few named actors, prints "port <N>", then serves commands
// on stdin until stdin closes:
//   stats   one line per link: "link <peer> <key>=<value>...", then "end"
//   rss     "rss <VmRSS KiB> <VmHWM KiB>"
//   open-gate  lets the actor exposed as "gate" process what it holds
//   connect <port>  links to the node on 127.0.0.1:<port>: "connected",
//                   or "connect-failed <reason>"
// Command-line flags are ferry's and CAF's (--ferry.node-name=..., ...).
#include "test_types.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/test_bytes.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;

caf::behavior echo() {
  return {
    [](const std::string& text) {
      return std::string{text.rbegin(), text.rend()};
    },
    [](const std::vector<std::byte>& bytes) {
      return ferry::test::fnv1a(bytes);
    },
    [](const ferry::test::record& x) {
      auto result = x;
      result.id += 1;
      return result;
    },
    [](const ferry::test::cereal_only& x) { return x.value() * 2; },
    [](const ferry::test::plain_point& x) {
      // Answers the point moved by one, its label and values reversed.
      return ferry::test::plain_point{
        x.x + 1, std::string{x.label.rbegin(), x.label.rend()},
        std::vector<double>{x.values.rbegin(), x.values.rend()}};
    },
    [](const ferry::test::inspected_only& x) {
      return ferry::test::inspected_only{x.value() * 2};
    },
    [](int32_t x) { return x + 1; },
    [](uint64_t n, int32_t fill) {
      // Answers `n` bytes of value `fill`.
      return std::vector<std::byte>(n, static_cast<std::byte>(fill));
    },
    [](const ferry::store::shared_array<double>& xs) {
      // Answers which store object it reads and the sum of its elements.
      double sum = 0;
      for (auto x : xs)
        sum += x;
      return std::to_string(static_cast<uint64_t>(xs.ref().id())) + " "
             + std::to_string(sum);
    },
    [](const ferry::test::labelled_array& x) {
      // Answers the label and the sum of the elements.
      double sum = 0;
      for (auto v : x.values)
        sum += v;
      return x.label + " " + std::to_string(static_cast<int64_t>(sum));
    },
    [](const ferry::store::parked_ref& x) -> caf::result<std::string> {
      // Answers the size of the parked object and the sum of its bytes.
      auto ref = x.get();
      if (!ref)
        return std::move(ref.error());
      uint64_t sum = 0;
      for (auto b : ref->bytes())
        sum += static_cast<uint8_t>(b);
      return std::to_string(ref->size()) + " " + std::to_string(sum);
    },
    [](const ferry::test::array_pair& x) {
      // Answers whether both handles name one object, and each one's sum.
      auto sum = [](const ferry::store::shared_array<double>& xs) {
        double result = 0;
        for (auto v : xs)
          result += v;
        return std::to_string(static_cast<int64_t>(result));
      };
      auto same = x.first.ref().id() == x.second.ref().id()
                  && x.first.data() == x.second.data();
      return std::string{same ? "same " : "distinct "} + sum(x.first) + " "
             + sum(x.second);
    },
  };
}

std::atomic<uint64_t> byte_arrays_seen{0};

/// Counts the byte arrays it gets; answers a string with the count.
caf::behavior counting() {
  return {
    [](const std::vector<std::byte>&) { ++byte_arrays_seen; },
    [](const std::string&) { return byte_arrays_seen.load(); },
  };
}

/// Counts int64 messages and how many came in order (0, 1, 2, ...); a
/// string asks for "<received> <in order>".
struct sequence_state {
  int64_t received = 0;
  int64_t in_order = 0;
};

caf::behavior sequence(caf::stateful_actor<sequence_state>* self) {
  return {
    [self](int64_t x) {
      auto& st = self->state;
      if (x == st.received)
        ++st.in_order;
      ++st.received;
    },
    [self](const std::string&) {
      return std::to_string(self->state.received) + " "
             + std::to_string(self->state.in_order);
    },
  };
}

/// Never answers byte vectors: keeps the promises, so requests stay pending.
struct hole_state {
  std::vector<caf::response_promise> promises;
};

caf::behavior hole(caf::stateful_actor<hole_state>* self) {
  return {
    [self](const std::vector<std::byte>&) {
      self->state.promises.emplace_back(self->make_response_promise());
      return caf::delegated<uint64_t>{};
    },
  };
}

/// Leaves byte vectors in its mailbox, unprocessed, until "open" arrives
/// (the test node's `open-gate` command sends it); then takes them in the
/// order they arrived, and answers "largest-at" with how many it took before
/// the largest one, any other string with how many it took.
struct gate_state {
  uint64_t taken = 0;
  uint64_t largest = 0;
  uint64_t largest_at = 0;
};

caf::behavior gate(caf::stateful_actor<gate_state>* self) {
  self->set_default_handler(caf::skip);
  return {
    [self](const std::string& cmd) {
      if (cmd != "open")
        return;
      self->become(
        [self](const std::vector<std::byte>& xs) {
          auto& st = self->state;
          if (xs.size() > st.largest) {
            st.largest = xs.size();
            st.largest_at = st.taken;
          }
          ++st.taken;
        },
        [self](const std::string& query) {
          return query == "largest-at" ? self->state.largest_at
                                       : self->state.taken;
        });
    },
  };
}

/// Spawned by name through remote_spawn: adds `base` to every int.
caf::behavior adder(caf::event_based_actor*, int32_t base) {
  return {
    [base](int32_t x) { return base + x; },
  };
}

/// Spawned by name like `adder`, but its constructor throws for a negative
/// base: what a spawned actor throws while it is made must come back to the
/// node that asked as an error.
class picky_adder : public caf::event_based_actor {
public:
  picky_adder(caf::actor_config& cfg, int32_t base)
    : caf::event_based_actor(cfg), base_(base) {
    if (base < 0)
      throw std::invalid_argument("picky-adder needs a base of at least 0, "
                                  "got "
                                  + std::to_string(base));
  }

  caf::behavior make_behavior() override {
    return {
      [this](int32_t x) { return base_ + x; },
    };
  }

private:
  int32_t base_;
};

/// Answers ('add', x, y) with x + y: atoms and multi-element messages.
caf::behavior atom_adder() {
  return {
    [](caf::atom_value op, int32_t x, int32_t y) -> caf::result<int32_t> {
      if (op == caf::atom("add"))
        return x + y;
      return caf::make_error(caf::sec::unexpected_message);
    },
  };
}

caf::behavior mortal(caf::event_based_actor* self) {
  return {
    [self](const std::string& text) {
      if (text == "die")
        self->quit(caf::exit_reason::user_shutdown);
      return text;
    },
  };
}

/// Answers an int64 with the id its sender has on this node (the id of the
/// proxy that stands for the remote sender here).
caf::behavior mirror(caf::event_based_actor* self) {
  return {
    [self](int64_t) -> uint64_t {
      auto sender = self->current_sender();
      return sender ? sender->id() : 0;
    },
  };
}

/// Asks whoever sends it a string for a string back: a request from this
/// node to a peer, answered (or not) as the peer likes.
caf::behavior asker(caf::event_based_actor* self) {
  return {
    [self](const std::string&) {
      if (auto peer = caf::actor_cast<caf::actor>(self->current_sender()))
        self->request(peer, caf::infinite, std::string{"ping"})
          .then([](const std::string&) {}, [](const caf::error&) {});
    },
  };
}

/// Answers an actor handle, a crew or a badge with what it got, and (handle, text)
/// with what the handle answers to text: handles that come back, and
/// handles used where they arrived.
caf::behavior handles(caf::event_based_actor* self) {
  return {
    [](const caf::actor& whom) { return whom; },
    [](const ferry::test::crew& x) { return x; },
    [](const ferry::test::badge& x) { return x; },
    [self](const caf::actor& whom,
           const std::string& text) -> caf::result<std::string> {
      auto answer = self->make_response_promise<std::string>();
      self->request(whom, std::chrono::seconds{10}, text)
        .then([answer](const std::string& x) mutable { answer.deliver(x); },
              [answer](caf::error& err) mutable {
                answer.deliver(std::move(err));
              });
      return answer;
    },
  };
}

/// Keeps the last actor handle it was given ("keep", handle) and asks it
/// ("call", text) for an answer: an actor held only by a remote handle.
caf::behavior keeper(caf::event_based_actor* self) {
  auto kept = std::make_shared<caf::actor>();
  return {
    [kept](const std::string&, const caf::actor& whom) {
      *kept = whom;
      return std::string{"kept"};
    },
    [self, kept](const std::string&,
                 const std::string& text) -> caf::result<std::string> {
      auto answer = self->make_response_promise<std::string>();
      self->request(*kept, std::chrono::seconds{10}, text)
        .then([answer](const std::string& x) mutable { answer.deliver(x); },
              [answer](caf::error& err) mutable {
                answer.deliver(std::move(err));
              });
      return answer;
    },
  };
}

/// Answers a shared array like the echo actor ("<object id> <sum>") and
/// keeps it, as a receiver that goes on working with what it got.
caf::behavior hoarder() {
  auto kept
    = std::make_shared<std::vector<ferry::store::shared_array<double>>>();
  return {
    [kept](const ferry::store::shared_array<double>& xs) {
      kept->push_back(xs);
      double sum = 0;
      for (auto x : xs)
        sum += x;
      return std::to_string(static_cast<uint64_t>(xs.ref().id())) + " "
             + std::to_string(sum);
    },
  };
}

std::string status_field(const char* key) {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      auto value = line.substr(std::string{key}.size());
      return std::to_string(std::stoull(value));
    }
  return "0";
}

void print_stats(ferry::node& n) {
  for (auto& s : n.stats()) {
    std::cout << "link " << s.peer << " same_host=" << s.same_host
              << " lane=" << s.lane
              << " received=" << s.messages_received
              << " sent=" << s.messages_sent << " refusals=" << s.refusals
              << " spilled_in=" << s.bytes_spilled_received
              << " inline_in=" << s.bytes_inline_received
              << " proxies=" << s.proxies << " spawned=" << s.spawned_actors
              << " transfers=" << s.transfers_held
              << " held=" << s.held_messages
              << " unasked=" << s.unasked_answers
              << " pulled=" << s.bytes_pulled
              << " pulled_by_peer=" << s.bytes_pulled_by_peer
              << " relayed_to_peer=" << s.bytes_relayed_to_peer
              << " relayed_by_peer=" << s.bytes_relayed_by_peer;
    for (auto& [family, count] : s.received_by_family)
      std::cout << " in:" << family << "=" << count;
    std::cout << '\n';
  }
  std::cout << "end" << std::endl;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  ferry::test::register_test_types(cfg);
  cfg.add_actor_type("adder", adder);
  cfg.add_actor_type<picky_adder, const int32_t&>("picky-adder");
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "test_node: " << ferry::render(err) << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "test_node: " << ferry::render(n.error()) << '\n';
    return 2;
  }
  auto& sys = (*n)->system();
  std::vector<caf::actor> actors{sys.spawn(echo), sys.spawn(counting),
                                 sys.spawn(mortal), sys.spawn(hole),
                                 sys.spawn(atom_adder), sys.spawn(sequence),
                                 sys.spawn(mirror), sys.spawn(gate),
                                 sys.spawn(asker), sys.spawn(handles),
                                 sys.spawn(keeper), sys.spawn(hoarder)};
  (*n)->expose("counting", actors[1]);
  (*n)->expose("mortal", actors[2]);
  (*n)->expose("hole", actors[3]);
  (*n)->expose("adder-by-atom", actors[4]);
  (*n)->expose("sequence", actors[5]);
  (*n)->expose("mirror", actors[6]);
  (*n)->expose("gate", actors[7]);
  (*n)->expose("asker", actors[8]);
  (*n)->expose("handles", actors[9]);
  (*n)->expose("keeper", actors[10]);
  (*n)->expose("hoarder", actors[11]);
  // FERRY_TEST_PUBLISH_ADDRESS: listen elsewhere than loopback (netns tests).
  const char* address = std::getenv("FERRY_TEST_PUBLISH_ADDRESS");
  auto port = (*n)->publish(actors[0], 0,
                            address != nullptr ? address : "127.0.0.1");
  if (!port) {
    std::cerr << "test_node: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::cout << "port " << *port << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "stats")
      print_stats(**n);
    else if (line == "open-gate")
      caf::anon_send(actors[7], std::string{"open"});
    else if (line.starts_with("connect ")) {
      auto linked = (*n)->remote_actor(
        "127.0.0.1", static_cast<uint16_t>(std::stoi(line.substr(8))));
      if (linked)
        std::cout << "connected" << std::endl;
      else
        std::cout << "connect-failed " << ferry::render(linked.error())
                  << std::endl;
    } else if (line == "rss")
      std::cout << "rss " << status_field("VmRSS:") << ' '
                << status_field("VmHWM:") << std::endl;
  }
  for (auto& actor : actors)
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return 0;
}
