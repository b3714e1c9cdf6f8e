// Entities on one node that joins no cluster (it holds every shard), with
// their state in an SQLite file: the first message activates an entity with
// its stored state, saves are acknowledged once durable and survive the
// node, an idle entity is passivated and comes back with its state (on a
// manual clock), an entity without state needs no rows, and what goes wrong
// is a typed error naming what and where while the node keeps running: an
// unknown type, a key over the limit, a save from a stale activation
// (forced by writing the row beside it), a state that does not decode, and
// a database that is not there at start. An activation whose member slept
// past its shard's lease refuses what its mailbox holds.
#include "entities/lease_fence.hpp"
#include "entities/protocol.hpp"
#include "entities/state_store.hpp"

#include "ferry/entity.hpp"
#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/eventually.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace ferry::entities_test {
namespace {

using namespace std::chrono_literals;
using get_atom = caf::atom_constant<caf::atom("get")>;
using rest_atom = caf::atom_constant<caf::atom("rest")>;

/// The state of a `tally`: a running total.
struct tally {
  int64_t total = 0;
};

/// Adds what it gets to its total, answering the total once it is saved;
/// `get` answers the total, `rest` asks to be passivated.
caf::behavior tally_behavior(ferry::entity<tally>* self) {
  return {
    [self](int64_t n) -> caf::result<int64_t> {
      self->state().total += n;
      auto rp = self->make_response_promise<int64_t>();
      self->save([self, rp](const caf::error& err) mutable {
        if (err)
          rp.deliver(err);
        else
          rp.deliver(self->state().total);
      });
      return rp;
    },
    [self](get_atom) { return self->state().total; },
    [self](rest_atom) { self->passivate(); },
  };
}

/// An entity without state: answers a string with its key.
caf::behavior echo_behavior(ferry::entity<ferry::no_state>* self) {
  return {
    [self](const std::string& x) { return self->key() + ":" + x; },
  };
}

/// A node with the two entity types, its database in a directory of the
/// test's own.
class entities : public testing::Test {
protected:
  entities() {
    dir = std::filesystem::temp_directory_path() /
          ("ferry-entities-" + std::to_string(::getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    location = "sqlite:" + (dir / "entities.db").string();
  }

  ~entities() override {
    n.reset();
    std::filesystem::remove_all(dir);
  }

  /// Starts the node (again) with the entities' database at `where`.
  void start(const std::string& where) {
    n.reset();
    cfg = std::make_unique<ferry::node_config>();
    cfg->node_name = "solo";
    cfg->store_enabled = false;
    cfg->entities.store = where;
    cfg->entities.shards = 8;
    cfg->entities.passivate_after = passivate_after;
    cfg->clock = time;
    cfg->log_sink = [](const std::string&) {
    };
    cfg->add_entity_type<tally>("tally", tally_behavior);
    cfg->add_entity_type<ferry::no_state>("echo", echo_behavior);
    auto made = ferry::node::start(*cfg);
    ASSERT_TRUE(made) << ferry::render(made.error());
    n = std::move(*made);
  }

  void start() { start(location); }

  /// Requests `x` of entity (type, key); the answer or the error.
  template <class Result, class... Ts>
  caf::expected<Result> ask(const std::string& type, const std::string& key,
                            Ts... xs) {
    auto whom = n->entities().ref(type, key);
    if (!whom)
      return std::move(whom.error());
    caf::scoped_actor self{n->system()};
    caf::expected<Result> result{caf::error{}};
    self->request(*whom, 10s, xs...)
      .receive([&](Result& x) { result = std::move(x); },
               [&](caf::error& err) { result = std::move(err); });
    return result;
  }

  /// Writes `total` as the stored state of tally `key` over version
  /// `expected`, beside the node (another activation's save).
  uint64_t write_beside(const std::string& key, uint64_t expected,
                        int64_t total) {
    ferry::detail::entities::state_store_config sc;
    sc.location = location;
    auto store = ferry::detail::entities::open_state_store(sc);
    EXPECT_TRUE(store) << ferry::render(store.error());
    auto bytes =
      ferry::detail::encode_state(n->registry(), "cereal.binary", tally{total});
    EXPECT_TRUE(bytes);
    auto v = (*store)->save("tally", key, expected, "cereal.binary", *bytes);
    EXPECT_TRUE(v) << ferry::render(v.error());
    return v ? *v : 0;
  }

  std::filesystem::path dir;
  std::string location;
  std::chrono::milliseconds passivate_after = 2min;
  std::shared_ptr<ferry::manual_clock> time =
    std::make_shared<ferry::manual_clock>();
  std::unique_ptr<ferry::node_config> cfg;
  std::unique_ptr<ferry::node> n;
};

TEST_F(entities, FirstMessageActivatesAndAcknowledgedSavesOutliveTheNode) {
  // Arrange
  start();
  // Act: two additions, the node stops, a new one adds again.
  auto first = ask<int64_t>("tally", "k1", int64_t{5});
  auto second = ask<int64_t>("tally", "k1", int64_t{7});
  auto other = ask<int64_t>("tally", "k2", int64_t{1});
  start();
  auto after = ask<int64_t>("tally", "k1", int64_t{1});
  // Assert
  ASSERT_TRUE(first) << ferry::render(first.error());
  EXPECT_EQ(*first, 5);
  ASSERT_TRUE(second) << ferry::render(second.error());
  EXPECT_EQ(*second, 12);
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, 1);
  ASSERT_TRUE(after) << ferry::render(after.error());
  EXPECT_EQ(*after, 13);
}

TEST_F(entities, IdleEntityIsPassivatedAndComesBackWithItsState) {
  // Arrange: entities rest after 1 s without a message.
  passivate_after = 1s;
  start();
  ASSERT_TRUE(ask<int64_t>("tally", "k", int64_t{5}));
  // Act: 2 s pass.
  time->advance(2s);
  auto rested = ferry::test::eventually([&] {
    auto s = n->entities().stats();
    return s.passivations == 1 && s.active["tally"] == 0;
  });
  auto again = ask<int64_t>("tally", "k", int64_t{1});
  // Assert
  EXPECT_TRUE(rested);
  ASSERT_TRUE(again) << ferry::render(again.error());
  EXPECT_EQ(*again, 6);
  EXPECT_EQ(n->entities().stats().activations, 2u);
}

TEST_F(entities, EntityAskingToRestIsPassivatedAfterWhatReachedItFirst) {
  // Arrange
  start();
  ASSERT_TRUE(ask<int64_t>("tally", "k", int64_t{3}));
  auto whom = n->entities().ref("tally", "k");
  ASSERT_TRUE(whom);
  // Act: it asks to rest; an addition sent after that still counts.
  caf::anon_send(*whom, rest_atom::value);
  auto total = ask<int64_t>("tally", "k", int64_t{4});
  auto rested = ferry::test::eventually(
    [&] { return n->entities().stats().passivations >= 1; });
  auto again = ask<int64_t>("tally", "k", get_atom::value);
  // Assert
  ASSERT_TRUE(total) << ferry::render(total.error());
  EXPECT_EQ(*total, 7);
  EXPECT_TRUE(rested);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 7);
}

TEST_F(entities, EntityWithoutStateAnswersWithItsKey) {
  // Arrange
  start();
  // Act
  auto answer = ask<std::string>("echo", "user-42", std::string{"hi"});
  // Assert
  ASSERT_TRUE(answer) << ferry::render(answer.error());
  EXPECT_EQ(*answer, "user-42:hi");
}

TEST_F(entities, UnknownTypeIsRefusedNamingTheTypesRegistered) {
  // Arrange
  start();
  // Act
  auto answer = ask<std::string>("nope", "k", std::string{"hi"});
  // Assert
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error(), caf::make_error(ferry::errc::unknown_entity_type,
                                            answer.error().context()));
  auto text = ferry::render(answer.error());
  EXPECT_NE(text.find("\"nope\""), std::string::npos) << text;
  EXPECT_NE(text.find("echo, tally"), std::string::npos) << text;
  EXPECT_TRUE(ask<std::string>("echo", "k", std::string{"alive"}));
}

TEST_F(entities, KeyOverTheLimitIsRefusedNamingTheSetting) {
  // Arrange
  start();
  // Act
  auto whom = n->entities().ref("tally", std::string(300, 'k'));
  auto empty = n->entities().ref("tally", "");
  // Assert
  ASSERT_FALSE(whom);
  EXPECT_EQ(whom.error(), caf::make_error(ferry::errc::invalid_entity_key,
                                          whom.error().context()));
  EXPECT_NE(ferry::render(whom.error()).find("max-key-bytes"),
            std::string::npos);
  EXPECT_FALSE(empty);
}

TEST_F(entities, StaleActivationsSaveIsRefusedAndItStops) {
  // Arrange: the activation loaded version 1; another saves version 2.
  start();
  ASSERT_TRUE(ask<int64_t>("tally", "k", int64_t{5}));
  ASSERT_EQ(write_beside("k", 1, 100), 2u);
  // Act: the stale activation's next save.
  auto stale = ask<int64_t>("tally", "k", int64_t{1});
  auto stopped = ferry::test::eventually(
    [&] { return n->entities().stats().active["tally"] == 0; });
  auto fresh = ask<int64_t>("tally", "k", int64_t{1});
  // Assert: refused with state_conflict; the next activation loads 100.
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error(), caf::make_error(ferry::errc::state_conflict,
                                           stale.error().context()))
    << ferry::render(stale.error());
  EXPECT_TRUE(stopped);
  ASSERT_TRUE(fresh) << ferry::render(fresh.error());
  EXPECT_EQ(*fresh, 101);
}

TEST_F(entities, StateThatDoesNotDecodeIsATypedErrorNamingTheEntity) {
  // Arrange: a row for tally "bad" that no tally was written as.
  start();
  ferry::detail::entities::state_store_config sc;
  sc.location = location;
  auto store = ferry::detail::entities::open_state_store(sc);
  ASSERT_TRUE(store);
  std::vector<std::byte> junk(3, std::byte{0xff});
  ASSERT_TRUE((*store)->save("tally", "bad", 0, "cereal.binary", junk));
  // Act
  auto answer = ask<int64_t>("tally", "bad", int64_t{1});
  // Assert: the error names the entity; the node serves the others.
  ASSERT_FALSE(answer);
  auto text = ferry::render(answer.error());
  EXPECT_EQ(answer.error(), caf::make_error(ferry::errc::state_store_failed,
                                            answer.error().context()))
    << text;
  EXPECT_NE(text.find("(\"tally\", \"bad\")"), std::string::npos) << text;
  EXPECT_TRUE(ask<int64_t>("tally", "good", int64_t{1}));
}

TEST_F(entities, DatabaseNotThereAtStartIsATypedErrorAndTheNodeRuns) {
  // Arrange: a file in a directory that does not exist.
  start("sqlite:" + (dir / "missing" / "entities.db").string());
  // Act
  auto answer = ask<int64_t>("tally", "k", int64_t{1});
  auto stateless = ask<std::string>("echo", "k", std::string{"hi"});
  // Assert: stateful entities fail naming the store; the node lives.
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error(), caf::make_error(ferry::errc::state_store_failed,
                                            answer.error().context()))
    << ferry::render(answer.error());
  EXPECT_NE(ferry::render(answer.error()).find("missing"), std::string::npos);
  // Shards need leases from the database too.
  ASSERT_FALSE(stateless);
  EXPECT_EQ(stateless.error(), caf::make_error(ferry::errc::state_store_failed,
                                               stateless.error().context()));
  EXPECT_NE(n->name(), "");
}

TEST_F(entities, NodeThatRegistersTypesNeedsAStore) {
  // Arrange
  ferry::node_config c;
  c.node_name = "nostore";
  c.store_enabled = false;
  c.add_entity_type<tally>("tally", tally_behavior);
  // Act
  auto made = ferry::node::start(c);
  // Assert
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error(), caf::make_error(ferry::errc::invalid_config,
                                          made.error().context()));
  EXPECT_NE(ferry::render(made.error()).find("ferry.entities.store"),
            std::string::npos);
}

TEST_F(entities, ActivationRefusesWhatItIsSentOnceItsLeaseMayHaveRunOut) {
  // Arrange: an activation spawned as its host spawns one, with a fence
  // this test moves, and this test as its host.
  start();
  caf::scoped_actor host{n->system()};
  ferry::manual_clock lease_time;
  auto fence = std::make_shared<ferry::detail::lease_fence>(lease_time);
  fence->hold_until(lease_time.now() + 1s);
  ferry::detail::entity_setup setup;
  setup.type = "echo";
  setup.key = "k";
  setup.host = caf::actor_cast<caf::actor>(host);
  setup.fence = fence;
  auto echo = n->system().spawn<ferry::entity<ferry::no_state>>(
    setup, ferry::entity<ferry::no_state>::behavior_fn{echo_behavior});
  caf::scoped_actor self{n->system()};
  auto ask_echo = [&](const std::string& x) {
    caf::expected<std::string> result{caf::error{}};
    self->request(echo, 10s, x).receive(
      [&](std::string& y) { result = std::move(y); },
      [&](caf::error& err) { result = std::move(err); });
    return result;
  };
  ASSERT_EQ(ask_echo("a"), "k:a");
  // Act: the member sleeps past the lease (as under SIGSTOP).
  lease_time.advance(1s);
  auto after = ask_echo("b");
  // Assert: refused with a typed error, and the host is asked to stop it.
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), caf::make_error(ferry::errc::entity_unavailable,
                                           after.error().context()));
  EXPECT_NE(ferry::render(after.error()).find("lease"), std::string::npos)
    << ferry::render(after.error());
  bool asked = false;
  host->receive(
    [&](ferry::detail::entities::idle_atom, const std::string& type,
        const std::string& key) { asked = type == "echo" && key == "k"; },
    caf::after(10s) >> [] {});
  EXPECT_TRUE(asked);
  self->send(echo, ferry::detail::entities::stop_atom::value);
}

} // namespace
} // namespace ferry::entities_test
