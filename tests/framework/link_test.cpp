// Links between two nodes of one process. A link's encode and decode plans
// (link/encoder.cpp, link/decoder.cpp, link/plan_cache.hpp): resolved once
// per type and header, they must do what resolving every message would,
// also when registrations change while the link is up and for more types
// than the link keeps plans for. A node going down while its actors send;
// handshakes crossing each other; a link made again after its connection
// dropped; a slow handshake; heartbeats taking a silent link down.
#include "two_nodes.hpp"

#include "ferry/test/eventually.hpp"
#include "ferry/test/tcp_relay.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;

namespace ferry::test {
namespace {

/// A value that can travel as itself or through a registered stand-in.
struct reading {
  int32_t value = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reading& x) {
  return f(caf::meta::type_name("reading"), x.value);
}

struct reading_text {
  std::string text;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reading_text& x) {
  return f(caf::meta::type_name("reading_text"), x.text);
}

/// Calls of the stand-in's `to` function.
std::atomic<int> to_text_calls{0};

reading_text to_text(const reading& x) {
  ++to_text_calls;
  return {std::to_string(x.value)};
}

reading from_text(reading_text&& x) {
  return {std::stoi(x.text)};
}

/// One of many distinct types.
template <int N>
struct tagged {
  int32_t value = 0;
};

template <class Inspector, int N>
typename Inspector::result_type inspect(Inspector& f, tagged<N>& x) {
  return f(x.value);
}

constexpr int many_types = 70; // more than a link keeps plans for (64)

template <int... Ns>
void add_tagged(ferry::node_config& cfg, std::integer_sequence<int, Ns...>) {
  (cfg.add_message_type<tagged<Ns>>("tagged" + std::to_string(Ns)), ...);
}

/// Sends one tagged<N> per N and counts the replies that carry it back.
template <int... Ns>
int round_trip_each(caf::scoped_actor& self, const caf::actor& dest,
                    std::integer_sequence<int, Ns...>) {
  int correct = 0;
  auto one = [&](auto x) {
    using type = decltype(x);
    self->request(dest, 10s, x).receive(
      [&](const type& y) {
        if (y.value == x.value)
          ++correct;
      },
      [&](caf::error& err) { ADD_FAILURE() << ferry::render(err); });
  };
  (one(tagged<Ns>{Ns}), ...);
  return correct;
}

caf::behavior doubler() {
  return {
    [](const reading& x) { return x.value * 2; },
  };
}

caf::behavior reflector(caf::event_based_actor* self) {
  self->set_default_handler(caf::reflect);
  return {
    [](int32_t x) { return x; },
  };
}

class link_plans : public two_nodes {
protected:
  /// Sends `reading{x}` and returns the reply, or -1.
  int32_t ask(caf::scoped_actor& self, const caf::actor& dest, int32_t x) {
    int32_t result = -1;
    self->request(dest, 10s, reading{x})
      .receive([&](int32_t y) { result = y; },
               [&](caf::error& err) { ADD_FAILURE() << ferry::render(err); });
    return result;
  }
};

/// Answers one int, then ends normally.
caf::behavior answers_once(caf::event_based_actor* self) {
  return {[self](int32_t x) {
    self->quit();
    return x;
  }};
}

TEST(link_errors, RenderOfNoErrorSaysNone) {
  EXPECT_EQ(ferry::render(caf::error{}), "none");
}

TEST_F(two_nodes, ARequestToARemoteActorThatEndedNormallyFailsNamingTheNormalExit) {
  // Arrange: the server's actor answers once and ends normally; the client
  // sees its proxy end with no error.
  ASSERT_TRUE(start());
  auto sut = connect(*server, *client, server->system().spawn(answers_once));
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  caf::scoped_actor self{client->system()};
  self->monitor(*sut);
  self->request(*sut, 10s, int32_t{1})
    .receive([](int32_t) {},
             [](caf::error& err) { FAIL() << ferry::render(err); });
  caf::error reason = caf::sec::request_timeout;
  self->receive([&](caf::down_msg& x) { reason = x.reason; },
                caf::after(10s) >> [] {});
  ASSERT_FALSE(reason) << ferry::render(reason);
  // Act
  caf::error err;
  self->request(*sut, 10s, int32_t{2})
    .receive([](int32_t) {}, [&](caf::error& x) { err = std::move(x); });
  // Assert: a typed error that says so, and the node goes on.
  EXPECT_EQ(err, caf::make_error(ferry::errc::no_such_actor, err.context()))
    << ferry::render(err);
  EXPECT_NE(ferry::render(err).find("has terminated (normal exit)"),
            std::string::npos)
    << ferry::render(err);
}

TEST_F(link_plans, SerializerRegisteredWhileTheLinkIsUpAppliesToTheNextMessage) {
  // Arrange: a link that has sent readings (and made their plans).
  for (auto* cfg : {&server_cfg, &client_cfg}) {
    cfg->add_message_type<reading>("reading");
    cfg->add_message_type<reading_text>("reading_text");
  }
  ASSERT_TRUE(start());
  auto worker = server->system().spawn(doubler);
  auto dest = connect(*server, *client, worker);
  ASSERT_TRUE(dest) << ferry::render(dest.error());
  caf::scoped_actor self{client->system()};
  ASSERT_EQ(ask(self, *dest, 1), 2);
  to_text_calls = 0;
  // Act: a serializer on both nodes, then none again.
  for (auto* n : {server.get(), client.get()})
    ASSERT_TRUE(n->registry().register_serializer<reading>(&to_text,
                                                           &from_text));
  auto with_stand_in = ask(self, *dest, 21);
  auto calls_with = to_text_calls.load();
  for (auto* n : {server.get(), client.get()})
    ASSERT_TRUE(n->registry().deregister_serializer<reading>());
  auto without = ask(self, *dest, 5);
  // Assert: the second message went through the stand-in, the third not.
  EXPECT_EQ(with_stand_in, 42);
  EXPECT_EQ(calls_with, 1);
  EXPECT_EQ(without, 10);
  EXPECT_EQ(to_text_calls.load(), 1);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_F(link_plans, MoreTypesThanTheLinkKeepsPlansForAllTravel) {
  // Arrange
  auto types = std::make_integer_sequence<int, many_types>{};
  add_tagged(server_cfg, types);
  add_tagged(client_cfg, types);
  ASSERT_TRUE(start());
  auto worker = server->system().spawn(reflector);
  auto dest = connect(*server, *client, worker);
  ASSERT_TRUE(dest) << ferry::render(dest.error());
  caf::scoped_actor self{client->system()};
  // Act: every type twice (the second time past a full cache as well).
  auto first = round_trip_each(self, *dest, types);
  auto second = round_trip_each(self, *dest, types);
  // Assert
  EXPECT_EQ(first, many_types);
  EXPECT_EQ(second, many_types);
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->messages_sent, 2u * many_types);
  EXPECT_EQ(stats->messages_received, 2u * many_types);
  EXPECT_EQ(stats->refusals, 0u);
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

std::atomic<int> asked{0};
std::atomic<int> refused{0};

/// Asks `target` for the size of 64 KiB again and again (encoded on the
/// worker running it, through the link), counting answers; ends at the
/// first error, counting it.
void ask_until_refused(caf::event_based_actor* self, caf::actor target) {
  self->request(target, 20s, std::vector<std::byte>(64 * 1024))
    .then(
      [self, target](uint64_t) {
        ++asked;
        ask_until_refused(self, target);
      },
      [self](caf::error&) {
        ++refused;
        self->quit();
      });
}

/// Starts asking the actor it is sent. (Here, not with the concurrency
/// tests: TSan cannot see CAF hand an actor's response handlers from one
/// worker to the next, and reports them as races.)
caf::behavior asker(caf::event_based_actor* self) {
  return {
    [self](const caf::actor& target) { ask_until_refused(self, target); },
  };
}

/// Sizes byte vectors.
caf::behavior sizer() {
  return {
    [](const std::vector<std::byte>& xs) {
      return static_cast<uint64_t>(xs.size());
    },
  };
}

class link_shutdown : public two_nodes {};

TEST_F(link_shutdown, NodeShutsDownWhileItsOwnActorsSend) {
  // Arrange: four actors of the client stream large requests while the
  // client node goes away: a sender still inside the link must not use the
  // node's members once they are destroyed.
  ASSERT_TRUE(start());
  auto worker = server->system().spawn(sizer);
  auto sut = connect(*server, *client, worker);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  constexpr int senders = 4;
  for (int i = 0; i < senders; ++i)
    caf::anon_send(client->system().spawn(asker), *sut);
  ASSERT_TRUE(ferry::test::eventually([&] { return asked >= 100; }));
  // Act: the node waits for its senders to leave the link; its actor
  // system waits for the senders to end.
  *sut = caf::actor{};
  client.reset();
  // Assert: every sender saw an error once the node went down.
  EXPECT_EQ(refused.load(), senders);
}

/// Asks `dest` from `from` to reflect `x`; its answer, or the error.
caf::expected<int32_t> ask(ferry::node& from, const caf::actor& dest,
                           int32_t x) {
  caf::scoped_actor self{from.system()};
  caf::expected<int32_t> result{caf::error{}};
  self->request(dest, 10s, x).receive(
    [&](int32_t y) { result = y; },
    [&](caf::error& err) { result = std::move(err); });
  return result;
}

class link_handshakes : public two_nodes {
protected:
  /// Starts both nodes and links the client through `relay_` to
  /// `on_server_`, a reflector the server publishes; `before_` is the
  /// client's proxy of it, checked with one request.
  void link_through_relay() {
    ASSERT_TRUE(start());
    on_server_ = server->system().spawn(reflector);
    auto port = server->publish(on_server_);
    ASSERT_TRUE(port) << ferry::render(port.error());
    relay_ = std::make_unique<tcp_relay>(*port);
    auto proxy = client->remote_actor("127.0.0.1", relay_->port());
    ASSERT_TRUE(proxy) << ferry::render(proxy.error());
    before_ = std::move(*proxy);
    ASSERT_EQ(ask(*client, before_, 7), 7);
  }

  void TearDown() override {
    if (on_server_)
      caf::anon_send_exit(on_server_, caf::exit_reason::user_shutdown);
  }

  caf::actor on_server_;
  std::unique_ptr<tcp_relay> relay_;
  caf::actor before_;
};

TEST_F(link_handshakes, NodesConnectingToEachOtherAtOnceShareLinksBothWays) {
  // Arrange: each node publishes an actor.
  ASSERT_TRUE(start());
  auto on_server = server->system().spawn(reflector);
  auto on_client = client->system().spawn(reflector);
  auto server_port = server->publish(on_server);
  auto client_port = client->publish(on_client);
  ASSERT_TRUE(server_port) << ferry::render(server_port.error());
  ASSERT_TRUE(client_port) << ferry::render(client_port.error());
  // Act: both handshakes at once. However they interleave, the node with
  // the lower id keeps one connection and refuses the other, and both
  // connects end with the one link.
  caf::expected<caf::actor> to_server{caf::actor{}};
  caf::expected<caf::actor> to_client{caf::actor{}};
  std::thread a{[&] {
    to_server = client->remote_actor("127.0.0.1", *server_port);
  }};
  std::thread b{[&] {
    to_client = server->remote_actor("127.0.0.1", *client_port);
  }};
  a.join();
  b.join();
  ASSERT_TRUE(to_server) << ferry::render(to_server.error());
  ASSERT_TRUE(to_client) << ferry::render(to_client.error());
  auto from_client = ask(*client, *to_server, 7);
  auto from_server = ask(*server, *to_client, 9);
  // Assert
  EXPECT_EQ(from_client, 7);
  EXPECT_EQ(from_server, 9);
  auto client_stats = client->stats("server");
  auto server_stats = server->stats("client");
  ASSERT_TRUE(client_stats);
  ASSERT_TRUE(server_stats);
  EXPECT_EQ(client->stats().size(), 1u);
  EXPECT_EQ(server->stats().size(), 1u);
  EXPECT_EQ(client_stats->unasked_answers, 0u);
  EXPECT_EQ(server_stats->unasked_answers, 0u);
  for (auto& x : {on_server, on_client})
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
}

TEST_F(link_handshakes, LinkThatDroppedIsMadeAgainByTheNextConnect) {
  // Arrange: the client reaches the server through a relay, so the test can
  // drop their connection while both nodes live on (their node ids stay the
  // same, so the new link is to the same node as the old one).
  ASSERT_NO_FATAL_FAILURE(link_through_relay());
  // Act: the connection drops; once both nodes let go of the link, the
  // client connects again.
  relay_->cut();
  ASSERT_TRUE(link_gone(*client, "server"));
  ASSERT_TRUE(link_gone(*server, "client"));
  auto after = client->remote_actor("127.0.0.1", relay_->port());
  // Assert: the new link carries requests both ways; the old proxy fails
  // with an error instead of waiting.
  ASSERT_TRUE(after) << ferry::render(after.error());
  EXPECT_EQ(relay_->connections(), 2);
  EXPECT_EQ(ask(*client, *after, 9), 9);
  EXPECT_FALSE(ask(*client, before_, 11));
  auto client_stats = client->stats("server");
  auto server_stats = server->stats("client");
  ASSERT_TRUE(client_stats) << ferry::render(client_stats.error());
  ASSERT_TRUE(server_stats) << ferry::render(server_stats.error());
  EXPECT_EQ(client_stats->messages_received, 1u);
}

TEST_F(link_handshakes, HandshakeWaitsForASlowAnswerBeyondTheHeartbeats) {
  // Arrange: both nodes beat every 100 ms, and the relay holds the server's
  // first bytes on the connection for 500 ms: the handshake has its own
  // timeout (10 s), heartbeats start with the link.
  for (auto* cfg : {&server_cfg, &client_cfg}) {
    cfg->default_link.heartbeat_interval = 100ms;
    cfg->default_link.connection_timeout = 10s;
  }
  ASSERT_TRUE(start());
  on_server_ = server->system().spawn(reflector);
  auto port = server->publish(on_server_);
  ASSERT_TRUE(port) << ferry::render(port.error());
  relay_ = std::make_unique<tcp_relay>(*port);
  relay_->hold_next_answer(500ms);
  // Act
  auto proxy = client->remote_actor("127.0.0.1", relay_->port());
  // Assert: linked on the one connection, and the link carries requests.
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  EXPECT_EQ(relay_->connections(), 1);
  EXPECT_EQ(ask(*client, *proxy, 7), 7);
}

TEST_F(link_handshakes, HeartbeatsTakeDownALinkWhoseConnectionWentSilent) {
  // Arrange: both nodes send heartbeats every 200 ms and give up on a
  // connection silent for 2 s, on one manual clock.
  auto time = std::make_shared<ferry::manual_clock>();
  for (auto* cfg : {&server_cfg, &client_cfg}) {
    cfg->default_link.heartbeat_interval = 200ms;
    cfg->default_link.connection_timeout = 2s;
    cfg->clock = time;
  }
  ASSERT_NO_FATAL_FAILURE(link_through_relay());
  // Act: 3 s pass while the heartbeats go through, a step of 150 ms at a
  // time with a moment for them to arrive; then the connection goes silent
  // without closing (packets dropped) and 2.1 s pass.
  for (int i = 0; i < 20; ++i) {
    time->advance(150ms);
    std::this_thread::sleep_for(5ms);
  }
  auto up_while_beating = client->stats("server") && server->stats("client");
  relay_->freeze();
  time->advance(2100ms);
  // Assert: the beating link stayed up; once silent, both nodes take it
  // down; the client connects again.
  EXPECT_TRUE(up_while_beating);
  ASSERT_TRUE(link_gone(*client, "server"));
  ASSERT_TRUE(link_gone(*server, "client"));
  auto after = client->remote_actor("127.0.0.1", relay_->port());
  ASSERT_TRUE(after) << ferry::render(after.error());
  EXPECT_EQ(ask(*client, *after, 9), 9);
}

} // namespace
} // namespace ferry::test
