// The C++ node the Python peer's tests talk to: it exposes by name the actors
// the tests call, and calls the tests' Python actors back.
//
// - "echo" answers every registered type with the value it received;
// - "fail" answers a `py.text` with an error of its own category
//   (`py_test`, code 42, the text as the error's text);
// - "caller" takes a `py.call` from a Python actor and requests that actor
//   with `count` values of the exactness tests' corpus (value_gen, seeded),
//   each of which must come back bit for bit; with `raise` set it sends one
//   `py.text` instead and reports the error the Python actor answered;
// - "streamer" sends a `py.stream`'s sender `count` one-way `py.blob`s of
//   `size` bytes, numbered, and answers how many it sent;
// - "stats" answers a `py.text` naming a peer with that link's counters.
//
// Every option is a ferry option (`--ferry.…`); the program prints
// "port N" once it listens and serves until its standard input ends.
#include "../../serializers/exact_values.hpp"

#include "ferry/errc.hpp"
#include "ferry/link_stats.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace {

using ferry::serializers::test::cereal_json_family;
using ferry::serializers::test::msgpack_family;
using ferry::serializers::test::nested;
using ferry::serializers::test::numbers;
using ferry::serializers::test::same;
using ferry::serializers::test::value_gen;

struct text {
  std::string value;
};

struct point {
  int32_t x = 0;
  int32_t y = 0;
};

struct blob {
  uint64_t seq = 0;
  std::vector<uint8_t> bytes;
};

struct call {
  uint64_t count = 0;
  uint64_t seed = 0;
  std::string family;
  bool raise = false;
};

struct call_result {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::string first_mismatch;
  std::string error;
};

struct stream {
  uint64_t count = 0;
  uint64_t size = 0;
};

struct link_report {
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t credit_waits = 0;
  uint64_t peak_in_flight_bytes = 0;
  uint64_t refusals = 0;
  uint64_t unasked_answers = 0;
  uint64_t bytes_pulled_by_peer = 0;
  bool same_host = false;
  bool lane = false;
  bool found = false;
};

caf::error py_error(const std::string& what) {
  return caf::error{42, caf::atom("py_test"), caf::make_message(what)};
}

caf::behavior echo(caf::event_based_actor*) {
  return {
    [](const nested& x) { return x; },  [](const numbers& x) { return x; },
    [](const point& x) { return x; },   [](const text& x) { return x; },
    [](const blob& x) { return x; },
  };
}

caf::behavior fail(caf::event_based_actor*) {
  return {
    [](const text& x) -> caf::result<text> { return py_error(x.value); },
  };
}

/// Requests `whom` with the corpus values of family `F`, one at a time, and
/// delivers the tally to `done`.
template <class F>
void call_back(caf::event_based_actor* self, caf::actor whom, call c,
               caf::response_promise done) {
  struct state {
    value_gen<F> gen;
    call_result result;
    uint64_t left;
  };
  auto st = std::make_shared<state>(state{value_gen<F>{c.seed}, {}, c.count});
  auto step = std::make_shared<std::function<void()>>();
  *step = [self, whom, st, step, done]() mutable {
    if (st->left == 0) {
      done.deliver(st->result);
      *step = nullptr;
      return;
    }
    --st->left;
    auto sent = st->gen.make_nested();
    self->request(whom, std::chrono::seconds(30), sent)
      .then(
        [st, step, sent](const nested& back) {
          ++st->result.checked;
          std::string where;
          if (!same(sent, back, &where)) {
            if (st->result.mismatches++ == 0)
              st->result.first_mismatch =
                "value #" + std::to_string(st->result.checked - 1) + ": "
                + where;
          }
          (*step)();
        },
        [st, step, done](caf::error& err) mutable {
          st->result.error = ferry::render(err);
          done.deliver(st->result);
          *step = nullptr;
        });
  };
  (*step)();
}

caf::behavior caller(caf::event_based_actor* self) {
  return {
    [self](const call& c) -> caf::result<call_result> {
      auto whom = caf::actor_cast<caf::actor>(self->current_sender());
      if (!whom)
        return caf::make_error(ferry::errc::no_such_actor,
                               "py.call needs a sender to call back");
      auto done = self->make_response_promise();
      if (c.raise) {
        self->request(whom, std::chrono::seconds(30), text{"raise"})
          .then(
            [done](const text& x) mutable {
              done.deliver(call_result{1, 1, "answered " + x.value, ""});
            },
            [done](caf::error& err) mutable {
              done.deliver(call_result{1, 0, "", ferry::render(err)});
            });
      } else if (c.family == "cereal.json") {
        call_back<cereal_json_family>(self, whom, c, done);
      } else {
        call_back<msgpack_family>(self, whom, c, done);
      }
      return done;
    },
  };
}

caf::behavior streamer(caf::event_based_actor* self) {
  return {
    [self](const stream& s) {
      auto whom = caf::actor_cast<caf::actor>(self->current_sender());
      uint64_t sent = 0;
      for (; sent < s.count && whom; ++sent)
        self->send(whom, blob{sent, std::vector<uint8_t>(s.size, 0x5a)});
      return link_report{sent};
    },
  };
}

caf::behavior stats(caf::event_based_actor*, ferry::node* n) {
  return {
    [n](const text& peer) {
      link_report r;
      for (auto& s : n->stats()) {
        if (s.peer != peer.value)
          continue;
        r = link_report{s.messages_sent,        s.messages_received,
                        s.credit_waits,         s.peak_in_flight_bytes,
                        s.refusals,             s.unasked_answers,
                        s.bytes_pulled_by_peer, s.same_host,
                        s.lane,                 true};
      }
      return r;
    },
  };
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  cfg.add_message_type<nested>("exact.nested");
  cfg.add_message_type<numbers>("exact.numbers");
  cfg.add_message_type<text>("py.text");
  cfg.add_message_type<point>("py.point");
  cfg.add_message_type<blob>("py.blob");
  cfg.add_message_type<call>("py.call");
  cfg.add_message_type<call_result>("py.call_result");
  cfg.add_message_type<stream>("py.stream");
  cfg.add_message_type<link_report>("py.link_report");
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "peer_service: " << ferry::render(err) << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "peer_service: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto& sys = (*n)->system();
  std::vector<caf::actor> actors{sys.spawn(echo), sys.spawn(fail),
                                 sys.spawn(caller), sys.spawn(streamer),
                                 sys.spawn(stats, n->get())};
  const char* names[] = {"echo", "fail", "caller", "streamer", "stats"};
  for (size_t i = 0; i < actors.size(); ++i)
    (*n)->expose(names[i], actors[i]);
  auto port = (*n)->publish(actors[0]);
  if (!port) {
    std::cerr << "peer_service: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::printf("port %u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  char buf[64];
  while (std::fgets(buf, sizeof(buf), stdin) != nullptr) {
  }
  for (auto& a : actors)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  return 0;
}
