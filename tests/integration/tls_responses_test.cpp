// Responses bound to the link their request left on, over plain and TLS
// links (it lives with the TLS tests for their nodes and PKI): node alpha's
// actor asks an actor of beta; gamma, linked to alpha too, answers in its
// place with the request's id, or with an id never asked; beta answers
// twice. Each answer that is not the first from beta is refused on the link
// it came on and counted there (`unasked_response`), and alpha's actor sees
// beta's one answer. A request that beta delegates to gamma is answered by
// gamma, through beta.
#include "tls_nodes.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using namespace ferry::test::tls;
using ferry::test::eventually;

using introduce_atom = caf::atom_constant<caf::atom("introduce")>;
using ask_atom = caf::atom_constant<caf::atom("ask")>;
using forge_atom = caf::atom_constant<caf::atom("forge")>;
using answer_atom = caf::atom_constant<caf::atom("answer")>;

/// What the test's actors saw, read by the test thread.
struct seen {
  std::mutex mtx;
  /// Every answer alpha's asker got, in order ("error: ..." for errors).
  std::vector<std::string> answers;
  /// The request id beta's holder was asked with (0: not yet).
  std::atomic<uint64_t> request{0};
  /// Whether gamma's forger has a proxy of alpha's asker.
  std::atomic<bool> introduced{false};

  void add(std::string x) {
    std::lock_guard<std::mutex> guard{mtx};
    answers.push_back(std::move(x));
  }

  std::vector<std::string> all() {
    std::lock_guard<std::mutex> guard{mtx};
    return answers;
  }
};

/// On alpha: introduces itself to an actor (a one-way message, so that the
/// actor's node gets a proxy of it) and asks another with `.then`.
caf::behavior asker(caf::event_based_actor* self, seen* s) {
  return {
    [self](introduce_atom, const caf::actor& whom) {
      self->send(whom, std::string{"hello"});
    },
    [self, s](ask_atom, const caf::actor& whom) {
      self->request(whom, 30s, std::string{"question"})
        .then([s](const std::string& x) { s->add(x); },
              [s](const caf::error& err) {
                s->add("error: " + ferry::render(err));
              });
    },
  };
}

struct holder_state {
  caf::response_promise promise;
  caf::strong_actor_ptr asker;
  caf::message_id mid;
};

/// On beta: keeps the promise of the request it gets until told to answer;
/// then answers it, and once more by hand with the same id.
caf::behavior holder(caf::stateful_actor<holder_state>* self, seen* s) {
  return {
    [self, s](const std::string&) {
      self->state.asker = self->current_sender();
      self->state.mid = self->current_message_id();
      self->state.promise = self->make_response_promise();
      s->request = self->state.mid.integer_value();
      return caf::delegated<std::string>{};
    },
    [self](answer_atom) {
      self->state.promise.deliver(std::string{"honest"});
      self->state.asker->enqueue(
        caf::make_mailbox_element(self->ctrl(), self->state.mid.response_id(),
                                  {}, std::string{"second"}),
        self->context());
    },
  };
}

struct forger_state {
  caf::strong_actor_ptr asker;
};

/// On gamma: keeps the proxy of the actor that said hello, and sends it a
/// response to the request id it is told.
caf::behavior forger(caf::stateful_actor<forger_state>* self, seen* s) {
  return {
    [self, s](const std::string&) {
      self->state.asker = self->current_sender();
      s->introduced = true;
    },
    [self](forge_atom, uint64_t request) {
      auto mid = caf::message_id{request}.response_id();
      self->state.asker->enqueue(
        caf::make_mailbox_element(self->ctrl(), mid, {}, std::string{"forged"}),
        self->context());
    },
  };
}

/// Keeps the promise of every request it gets, answering none.
caf::behavior
hole(caf::stateful_actor<std::vector<caf::response_promise>>* self) {
  return {
    [self](const std::string&) {
      self->state.emplace_back(self->make_response_promise());
      return caf::delegated<std::string>{};
    },
  };
}

/// On beta: delegates every string to `to`.
caf::behavior delegator(caf::event_based_actor* self, caf::actor to) {
  return {
    [self, to](const std::string& x) { return self->delegate(to, x); },
  };
}

/// Answers every string with the name of the node that answered it.
caf::behavior answerer(caf::event_based_actor*, std::string node) {
  return {
    [node](const std::string& x) { return x + " answered by " + node; },
  };
}

/// Returns the responses `on` refused from `peer` as unasked.
uint64_t unasked(tls_node& on, const std::string& peer) {
  auto stats = on.node->stats(peer);
  if (!stats)
    return 0;
  auto i = stats->refusals_by_reason.find("unasked_response");
  return i == stats->refusals_by_reason.end() ? 0 : i->second;
}

/// alpha, beta and gamma, plain or TLS as the parameter says, started.
class responses : public testing::TestWithParam<bool> {
protected:
  /// What the actors saw: made first, so it outlives the nodes' actors.
  seen s;

  responses()
    : alpha("alpha", GetParam() ? "alpha" : ""),
      beta("beta", GetParam() ? "beta" : ""),
      gamma("gamma", GetParam() ? "gamma" : "") {
    for (auto* n : {&alpha, &beta, &gamma}) {
      auto err = n->start();
      EXPECT_FALSE(err) << text_of(err);
    }
  }

  ~responses() override {
    for (auto& x : actors)
      caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
  }

  /// Spawns `fun` with `xs` on `where`; the actor ends with the test.
  template <class F, class... Ts>
  caf::actor spawn(tls_node& where, F fun, Ts&&... xs) {
    auto result = where.node->system().spawn(fun, std::forward<Ts>(xs)...);
    actors.push_back(result);
    return result;
  }

  std::vector<caf::actor> actors;

  tls_node alpha;
  tls_node beta;
  tls_node gamma;
};

TEST_P(responses, AnswerFromAnotherLinkIsRefusedAndTheAskedPeersAnswerArrives) {
  // Arrange: alpha links to beta's holder and gamma's forger; the forger
  // has a proxy of alpha's asker; the asker's request waits at beta.
  auto hold = spawn(beta, holder, &s);
  auto forge = spawn(gamma, forger, &s);
  auto held = beta.node->publish(hold);
  auto forging = gamma.node->publish(forge);
  ASSERT_TRUE(held && forging);
  auto to_holder = alpha.node->remote_actor("127.0.0.1", *held);
  auto to_forger = alpha.node->remote_actor("127.0.0.1", *forging);
  ASSERT_TRUE(to_holder && to_forger);
  auto sut = spawn(alpha, asker, &s);
  caf::anon_send(sut, introduce_atom::value, *to_forger);
  ASSERT_TRUE(eventually([&] { return s.introduced.load(); }));
  caf::anon_send(sut, ask_atom::value, *to_holder);
  ASSERT_TRUE(eventually([&] { return s.request.load() != 0; }));
  // Act: gamma answers the request beta holds, then one never asked; then
  // beta answers, twice.
  caf::anon_send(forge, forge_atom::value, s.request.load());
  ASSERT_TRUE(eventually([&] { return unasked(alpha, "gamma") == 1; }));
  caf::anon_send(forge, forge_atom::value, s.request.load() + 1000);
  ASSERT_TRUE(eventually([&] { return unasked(alpha, "gamma") == 2; }));
  caf::anon_send(hold, answer_atom::value);
  // Assert: the asker got beta's first answer only; the second was refused
  // on beta's link, and both links stay up.
  // The refusal of the second answer can be counted before the asker has
  // taken the first from its mailbox: wait for both.
  ASSERT_TRUE(eventually([&] { return unasked(alpha, "beta") == 1; }));
  ASSERT_TRUE(eventually([&] { return !s.all().empty(); }));
  EXPECT_EQ(s.all(), std::vector<std::string>{"honest"});
  EXPECT_EQ(unasked(alpha, "gamma"), 2u);
  EXPECT_TRUE(alpha.node->stats("beta"));
  EXPECT_TRUE(alpha.node->stats("gamma"));
  auto lines = alpha.logged("a response from node gamma");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("ferry.link"), std::string::npos)
    << lines.front();
}

TEST_P(responses, DelegatedRequestIsAnsweredByTheNodeItWasDelegatedTo) {
  // Arrange: beta delegates to gamma's answerer, through its own link.
  auto answers = spawn(gamma, answerer, "gamma");
  auto port = gamma.node->publish(answers);
  ASSERT_TRUE(port);
  auto to_answerer = beta.node->remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(to_answerer);
  auto delegates = spawn(beta, delegator, *to_answerer);
  auto beta_port = beta.node->publish(delegates);
  ASSERT_TRUE(beta_port);
  auto to_delegator = alpha.node->remote_actor("127.0.0.1", *beta_port);
  ASSERT_TRUE(to_delegator);
  auto sut = spawn(alpha, asker, &s);
  // Act
  caf::anon_send(sut, ask_atom::value, *to_delegator);
  // Assert
  ASSERT_TRUE(eventually([&] { return !s.all().empty(); }));
  EXPECT_EQ(s.all(), std::vector<std::string>{"question answered by gamma"});
  EXPECT_EQ(unasked(alpha, "beta"), 0u);
  EXPECT_EQ(unasked(beta, "gamma"), 0u);
}

TEST_P(responses, ScopedActorsReceiveAndAwaitTakeTheirAnswers) {
  // Arrange
  auto port = beta.node->publish(spawn(beta, answerer, "beta"));
  ASSERT_TRUE(port);
  auto to_beta = alpha.node->remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(to_beta);
  std::string received;
  // Act: a scoped actor's receive, and an event-based actor's await.
  caf::scoped_actor self{alpha.node->system()};
  self->request(*to_beta, 10s, std::string{"first"})
    .receive([&](const std::string& x) { received = x; },
             [&](const caf::error& err) { received = text_of(err); });
  auto awaiting = alpha.node->system().spawn([&](caf::event_based_actor* me) {
    me->request(*to_beta, 10s, std::string{"second"})
      .await([&](const std::string& x) { s.add(x); },
             [&](const caf::error& err) { s.add(text_of(err)); });
  });
  // Assert
  EXPECT_EQ(received, "first answered by beta");
  ASSERT_TRUE(eventually([&] { return !s.all().empty(); }));
  EXPECT_EQ(s.all(), std::vector<std::string>{"second answered by beta"});
  EXPECT_EQ(unasked(alpha, "beta"), 0u);
  static_cast<void>(awaiting);
}

TEST_P(responses, OldestRequestFailsWhenTheLinksTableIsFull) {
  // Arrange: alpha's link remembers two requests; beta answers none.
  alpha.node.reset();
  alpha.cfg.default_link.max_pending_requests = 2;
  ASSERT_FALSE(alpha.start());
  auto port = beta.node->publish(spawn(beta, hole));
  ASSERT_TRUE(port);
  auto to_hole = alpha.node->remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(to_hole);
  auto sut = spawn(alpha, asker, &s);
  // Act: a third request while two wait.
  for (int i = 0; i < 3; ++i)
    caf::anon_send(sut, ask_atom::value, *to_hole);
  // Assert: the first fails, naming the setting; the others still wait.
  ASSERT_TRUE(eventually([&] { return !s.all().empty(); }));
  auto answers = s.all();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_NE(answers[0].find("too_many_requests"), std::string::npos)
    << answers[0];
  EXPECT_NE(answers[0].find("ferry.link.max-pending-requests"),
            std::string::npos)
    << answers[0];
  EXPECT_EQ(alpha.node->stats("beta")->pending_requests, 2u);
}

INSTANTIATE_TEST_SUITE_P(links, responses, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "tls" : "plain";
                         });

} // namespace
