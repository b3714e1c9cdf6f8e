// The PostgreSQL store's own cases (entities/postgres_store, pg_pool): the
// server going away and coming back under an open store, a call whose
// connection is ended mid-way, no server at the location, and what the
// store's description shows and hides.
#include "store_backends.hpp"

#include "ferry/test/child_process.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/ports.hpp"

#include <chrono>
#include <future>
#include <string>

using namespace ferry::entities_test;
using namespace std::chrono_literals;
using ferry::errc;
using ferry::render;
using ferry::detail::entities::open_state_store;
using ferry::detail::entities::state_store_config;
using ferry::test::eventually;
using ferry::test::postgres_server;

namespace {

class postgres_store_test : public store_fixture<postgres_backend> {};

/// Returns how long `fn` took.
template <class Fn>
std::chrono::steady_clock::duration timed(Fn fn) {
  auto began = std::chrono::steady_clock::now();
  fn();
  return std::chrono::steady_clock::now() - began;
}

} // namespace

TEST(postgres_store, CallsFailWhileTheServerIsDownAndWorkOnceItIsBack) {
  // Arrange: a server of this test's own, over TCP.
  ferry::test::postgres_server_options options;
  options.listen_address = "127.0.0.1";
  auto started = postgres_server::start(options);
  ASSERT_TRUE(started.server) << started.error;
  auto& server = *started.server;
  state_store_config cfg;
  cfg.location = "postgresql:" + server.tcp_conninfo();
  cfg.pool_size = 2;
  cfg.connect_timeout = 2s;
  auto opened = open_state_store(cfg);
  ASSERT_TRUE(opened) << render(opened.error());
  auto& sut = *opened;
  ASSERT_TRUE(sut->save("counter", "k1", 0, "raw", bytes_of("before")));
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  ASSERT_EQ(server.stop(), "");
  // Act
  std::vector<caf::error> errors;
  auto took = timed([&] {
    auto loaded = sut->load("counter", "k1");
    errors.push_back(loaded ? caf::error{} : loaded.error());
    auto saved = sut->save("counter", "k1", 1, "raw", bytes_of("while down"));
    errors.push_back(saved ? caf::error{} : saved.error());
    auto grant = sut->acquire(7, "member-a", 30s, 0ms);
    errors.push_back(grant ? caf::error{} : grant.error());
    auto renewed = sut->renew("member-a", 30s);
    errors.push_back(renewed ? caf::error{} : renewed.error());
    errors.push_back(sut->release(7, "member-a", ""));
  });
  ASSERT_EQ(server.restart(), "");
  auto loaded_after = sut->load("counter", "k1");
  auto saved_after = sut->save("counter", "k1", 1, "raw", bytes_of("after"));
  // Assert
  EXPECT_LT(took, 10s);
  for (auto& err : errors) {
    ASSERT_TRUE(err);
    EXPECT_TRUE(has_code(err, errc::state_store_failed)) << render(err);
    auto text = render(err);
    EXPECT_NE(text.find(sut->describe()), std::string::npos) << text;
    EXPECT_NE(text.find("connection to server at \"127.0.0.1\""),
              std::string::npos)
      << text;
    EXPECT_NE(text.find("server running"), std::string::npos) << text;
  }
  ASSERT_TRUE(loaded_after) << render(loaded_after.error());
  EXPECT_EQ(loaded_after->bytes, bytes_of("before"));
  ASSERT_TRUE(saved_after) << render(saved_after.error());
  EXPECT_EQ(*saved_after, 2u);
}

TEST_F(postgres_store_test, CallWhoseConnectionEndsMidWayFailsAndTheNextWorks) {
  // Arrange: a psql session holds shard 7's row, so the store's acquire
  // waits for its lock; then the acquire's connection is ended.
  auto sut = open_sut();
  ASSERT_NE(sut, nullptr);
  ASSERT_TRUE(sut->acquire(7, "member-a", 30s, 0ms));
  auto& server = *postgres_backend::server().server;
  auto database = backend.location().substr(std::string{"postgresql:"}.size());
  ferry::test::child_process holder{
    postgres_server::psql(),
    {"-X", "-q", "-d", database + " application_name=holder", "-c",
     "BEGIN; SELECT 1 FROM ferry_shard_leases WHERE shard = 7 FOR UPDATE;"
     " SELECT pg_sleep(60);"}};
  auto count = [&](const std::string& where) {
    return server
      .query("postgres", "SELECT count(*) FROM pg_stat_activity WHERE " + where)
      .output;
  };
  ASSERT_TRUE(eventually(
    [&] {
      return count("application_name = 'holder' AND wait_event = 'PgSleep'") ==
             "1\n";
    },
    10s));
  // Act
  auto waiting = std::async(
    std::launch::async, [&] { return sut->acquire(7, "member-b", 30s, 0ms); });
  ASSERT_TRUE(eventually(
    [&] {
      return count("application_name = 'ferry-entities'"
                   " AND wait_event_type = 'Lock'") == "1\n";
    },
    10s));
  ASSERT_EQ(server.run_sql("postgres",
                           "SELECT pg_terminate_backend(pid) FROM "
                           "pg_stat_activity WHERE application_name = "
                           "'ferry-entities' AND wait_event_type = 'Lock'"),
            "");
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  auto failed = waiting.get();
  ASSERT_EQ(server.run_sql("postgres",
                           "SELECT pg_terminate_backend(pid) FROM "
                           "pg_stat_activity WHERE application_name = "
                           "'holder'"),
            "");
  holder.wait(10s);
  auto next = sut->acquire(7, "member-a", 30s, 0ms);
  // Assert
  ASSERT_FALSE(failed);
  EXPECT_TRUE(has_code(failed.error(), errc::state_store_failed));
  auto text = render(failed.error());
  EXPECT_NE(text.find("shard 7"), std::string::npos) << text;
  EXPECT_NE(text.find("terminating connection"), std::string::npos) << text;
  ASSERT_TRUE(next) << render(next.error());
  EXPECT_TRUE(next->held);
  EXPECT_EQ(next->epoch, 1u);
}

TEST(postgres_store, OpenFailsWhenNoServerIsThereNamingWhereAndLibpqsMessage) {
  auto port = std::to_string(ferry::test::free_port());
  for (std::string conninfo :
       {"host=/tmp/ferry-no-server-here port=" + port + " dbname=x",
        "host=127.0.0.1 port=" + port + " dbname=x user=postgres"}) {
    // Arrange
    state_store_config cfg;
    cfg.location = "postgresql:" + conninfo;
    cfg.connect_timeout = 2s;
    // Act
    auto began = std::chrono::steady_clock::now();
    auto store = open_state_store(cfg);
    auto took = std::chrono::steady_clock::now() - began;
    // Assert
    ASSERT_FALSE(store) << conninfo;
    EXPECT_TRUE(has_code(store.error(), errc::state_store_failed));
    auto text = render(store.error());
    EXPECT_NE(text.find("postgresql:host="), std::string::npos) << text;
    EXPECT_NE(text.find("connection to server"), std::string::npos) << text;
    EXPECT_NE(text.find("check that the server runs"), std::string::npos)
      << text;
    EXPECT_LT(took, 5s);
  }
}

TEST_F(postgres_store_test, DescriptionNamesTheServerButNoPassword) {
  // Arrange
  state_store_config cfg;
  cfg.location = backend.location() + " password=sekret";
  // Act
  auto store = open_state_store(cfg);
  // Assert
  ASSERT_TRUE(store) << render(store.error());
  auto where = (*store)->describe();
  EXPECT_EQ(where.find("sekret"), std::string::npos) << where;
  EXPECT_EQ(where.find("password"), std::string::npos) << where;
  EXPECT_NE(where.find("postgresql:host=/tmp/ferry-pg-"), std::string::npos)
    << where;
  EXPECT_NE(where.find("dbname=test_"), std::string::npos) << where;
}

TEST_F(postgres_store_test, UriLocationOpensTheSameDatabase) {
  // Arrange: the keyword/value form's settings as a URI.
  auto conninfo = backend.location().substr(std::string{"postgresql:"}.size());
  auto value = [&](const std::string& key) {
    auto at = conninfo.find(key + "=") + key.size() + 1;
    return conninfo.substr(at, conninfo.find(' ', at) - at);
  };
  auto by_keywords = open_sut();
  ASSERT_NE(by_keywords, nullptr);
  ASSERT_TRUE(by_keywords->save("counter", "k1", 0, "raw", bytes_of("x")));
  state_store_config cfg;
  cfg.location = "postgresql://postgres@/" + value("dbname") +
                 "?host=" + value("host") + "&port=" + value("port");
  // Act
  auto store = open_state_store(cfg);
  // Assert
  ASSERT_TRUE(store) << render(store.error());
  auto loaded = (*store)->load("counter", "k1");
  ASSERT_TRUE(loaded) << render(loaded.error());
  EXPECT_EQ(loaded->version, 1u);
}
