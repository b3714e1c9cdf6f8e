// node_config: options from a config file and flags, per-link sections,
// and starting a node with no configuration at all.
#include "config_parsing.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/node_config.hpp"

#include "ferry/serializers/payload.hpp"
#include "ferry/store/errc.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>

using ferry::test::load;
using ferry::test::parse;
using ferry::test::parse_and_finalize;

namespace {

/// Returns how often this process's threads went to sleep so far.
long voluntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}

/// Starts a node on `cfg`, has one of its actors answer one request, and
/// returns how often the process's threads went to sleep in the next 100 ms,
/// with nothing to do.
long sleeps_while_idle(ferry::node_config& cfg) {
  auto node = ferry::node::start(cfg);
  if (!node) {
    ADD_FAILURE() << ferry::render(node.error());
    return 0;
  }
  auto& sys = (*node)->system();
  auto echo = sys.spawn([]() -> caf::behavior {
    return {[](int x) { return x; }};
  });
  caf::scoped_actor self{sys};
  self->request(echo, caf::infinite, 1)
    .receive([](int) {},
             [](caf::error& err) { ADD_FAILURE() << ferry::render(err); });
  auto before = voluntary_switches();
  std::this_thread::sleep_for(std::chrono::milliseconds{100});
  return voluntary_switches() - before;
}

} // namespace

TEST(node_config, ConfigFileSetsNodeAndPerLinkSettings) {
  // Arrange
  ferry::node_config sut;
  auto ini = R"([ferry]
node-name = "node-a"
[ferry.link]
serializers = ["cereal.binary", "caf"]
[ferry.links]
node-b = {
  serializers = ["cereal.portable"]
  deserializers = ["cereal.portable", "msgpack"]
  spill-threshold = 1024
}
node-c = { serializers = ["msgpack"] }
)";
  // Act
  ASSERT_FALSE(parse(sut, ini));
  auto err = sut.finalize();
  // Assert
  ASSERT_FALSE(err) << ferry::render(err);
  EXPECT_EQ(sut.node_name, "node-a");
  EXPECT_EQ(sut.default_link.serializers,
            (std::vector<std::string>{"cereal.binary", "caf"}));
  auto& b = sut.link_for("node-b");
  EXPECT_EQ(b.serializers, std::vector<std::string>{"cereal.portable"});
  EXPECT_EQ(b.spill_threshold, 1024u);
  EXPECT_EQ(sut.link_for("node-c").serializers,
            std::vector<std::string>{"msgpack"});
  EXPECT_EQ(&sut.link_for("node-z"), &sut.default_link);
}

TEST(node_config, FlagsOverrideTheConfigFile) {
  // Arrange
  ferry::node_config sut;
  // Act
  ASSERT_FALSE(parse(sut, "[ferry]\nnode-name = \"from-file\"\n",
                     {"--ferry.node-name=from-flag"}));
  ASSERT_FALSE(sut.finalize());
  // Assert
  EXPECT_EQ(sut.node_name, "from-flag");
}

TEST(node_config, BadLinkSectionFailsNamingTheSection) {
  // Arrange
  ferry::node_config sut;
  ASSERT_FALSE(parse(sut, "[ferry.links]\nnode-b = { spill-treshold = 5 }\n"));
  // Act
  auto err = sut.finalize();
  // Assert
  ASSERT_TRUE(err);
  auto text = ferry::render(err);
  EXPECT_NE(text.find("ferry.links.node-b"), std::string::npos) << text;
  EXPECT_NE(text.find("spill-treshold"), std::string::npos) << text;
}

TEST(node_config, DefaultsFillNameHostAndStore) {
  // Arrange
  ferry::node_config sut;
  // Act
  ASSERT_FALSE(sut.finalize());
  // Assert
  EXPECT_FALSE(sut.node_name.empty());
  EXPECT_FALSE(sut.host_id.empty());
  EXPECT_EQ(sut.store_name.rfind("ferry-", 0), 0u);
}

TEST(node, StartsWithoutConfigurationAndWithoutStore) {
  // Arrange
  ferry::node_config cfg;
  cfg.store_enabled = false;
  // Act
  auto sut = ferry::node::start(cfg);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  EXPECT_EQ((*sut)->store(), nullptr);
  EXPECT_TRUE((*sut)->stats().empty());
}

TEST(node_config, TransportSettingsComeFromTheFileAndFlags) {
  // Arrange
  ferry::node_config by_default;
  ferry::node_config by_flag;
  ferry::node_config by_file;
  // Act
  load(by_default, "");
  load(by_flag, "", {"--ferry.transport.io-threads=3",
                     "--ferry.transport.handshake-timeout=2s"});
  load(by_file, "[ferry.transport]\nio-threads = 2\nhandshake-timeout = "
                "500ms\n");
  // Assert
  EXPECT_EQ(by_default.io_threads, 1u);
  EXPECT_EQ(by_default.handshake_timeout, std::chrono::seconds{10});
  EXPECT_EQ(by_flag.io_threads, 3u);
  EXPECT_EQ(by_flag.handshake_timeout, std::chrono::seconds{2});
  EXPECT_EQ(by_file.io_threads, 2u);
  EXPECT_EQ(by_file.handshake_timeout, std::chrono::milliseconds{500});
}

TEST(node_config, NoIoThreadsOrAHandshakeWithoutTimeIsAConfigError) {
  // Arrange
  ferry::node_config no_threads;
  ferry::node_config no_time;
  // Act
  auto threads_err = parse_and_finalize(no_threads,
                                        {"--ferry.transport.io-threads=0"});
  auto time_err = parse_and_finalize(no_time,
                                     {"--ferry.transport.handshake-timeout=0s"});
  // Assert
  EXPECT_EQ(threads_err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(threads_err).find("ferry.transport.io-threads"),
            std::string::npos);
  EXPECT_EQ(time_err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(time_err).find("handshake-timeout"),
            std::string::npos);
}

TEST(node_config, SpinsComeFromFlagsAndFileWithinTheirBounds) {
  // Arrange
  ferry::node_config by_default;
  ferry::node_config by_flag;
  ferry::node_config by_file;
  ferry::node_config too_long;
  ferry::node_config negative;
  // Act
  load(by_default, "");
  load(by_flag, "", {"--ferry.transport.io-spin=50us",
                     "--ferry.scheduler.spin=0s"});
  load(by_file, "[ferry.scheduler]\nspin = 1ms\n[ferry.transport]\n"
                "io-spin = 2ms\n");
  auto long_err = parse_and_finalize(too_long, {"--ferry.scheduler.spin=20ms"});
  auto negative_err =
    parse_and_finalize(negative, {"--ferry.transport.io-spin=-1ms"});
  // Assert
  EXPECT_EQ(by_default.io_spin, std::chrono::microseconds{200});
  EXPECT_EQ(by_default.scheduler_spin, std::chrono::microseconds{200});
  EXPECT_EQ(by_flag.io_spin, std::chrono::microseconds{50});
  EXPECT_EQ(by_flag.scheduler_spin, std::chrono::microseconds{0});
  EXPECT_EQ(by_file.scheduler_spin, std::chrono::milliseconds{1});
  EXPECT_EQ(by_file.io_spin, std::chrono::milliseconds{2});
  EXPECT_EQ(long_err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(long_err).find("ferry.scheduler.spin"),
            std::string::npos);
  EXPECT_EQ(negative_err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(negative_err).find("ferry.transport.io-spin"),
            std::string::npos);
}

TEST(node, IdleSchedulerWorkersWaitInsteadOfPollingWithSleeps) {
  // Label `timing`: it counts what threads do in 100 ms, which a loaded
  // machine can skew.
  // Arrange: ferry's default, and CAF's own (a config outlives its node).
  ferry::node_config by_default;
  ferry::node_config cafs_default;
  for (auto* cfg : {&by_default, &cafs_default})
    cfg->store_enabled = false;
  cafs_default.set("work-stealing.moderate-sleep-duration",
                   caf::timespan{std::chrono::microseconds{50}});
  // Act
  auto waiting = sleeps_while_idle(by_default);
  auto polling = sleeps_while_idle(cafs_default);
  // Assert: CAF's workers sleep 50 us up to 500 times each before they
  // wait (thousands of wake-ups); waiting workers wake every 100 ms.
  EXPECT_EQ(caf::get_or(by_default, "work-stealing.moderate-sleep-duration",
                        caf::timespan{-1}),
            caf::timespan{0});
  EXPECT_LT(waiting * 4, polling)
    << "idle for 100 ms: " << waiting << " sleeps with ferry's default, "
    << polling << " with CAF's";
}

TEST(node, UnknownFamilyInSerializersIsAConfigError) {
  // Arrange
  ferry::node_config cfg;
  cfg.store_enabled = false;
  cfg.default_link.serializers = {"protobuf"};
  // Act
  auto sut = ferry::node::start(cfg);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().category(), caf::atom("ferry_fw"));
  EXPECT_NE(ferry::render(sut.error()).find("protobuf"), std::string::npos);
}

TEST(node_config, LinkSetInCodeGetsTheChecksOfTheFile) {
  // Arrange: a chunk size of 0 would make a puller ask for empty chunks
  // forever.
  ferry::node_config sut;
  ferry::link_config bad;
  bad.chunk_size = 0;
  sut.link("node-b", bad);
  // Act
  auto err = sut.finalize();
  // Assert
  ASSERT_TRUE(err);
  EXPECT_EQ(err, caf::make_error(ferry::errc::invalid_config, err.context()));
  auto text = ferry::render(err);
  EXPECT_NE(text.find("\"node-b\""), std::string::npos) << text;
  EXPECT_NE(text.find("chunk-size"), std::string::npos) << text;
}

TEST(node, UnknownFamilyInAPeersLinkIsAConfigError) {
  // Arrange
  ferry::node_config cfg;
  cfg.store_enabled = false;
  ferry::link_config link;
  link.serializers = {"protobuf"};
  cfg.link("node-b", link);
  // Act
  auto sut = ferry::node::start(cfg);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error(),
            caf::make_error(ferry::errc::invalid_config, sut.error().context()));
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("\"protobuf\" in serializers of the link to \"node-b\""),
            std::string::npos)
    << text;
}

TEST(node_config, StoreErrorInsideADecodedValueKeepsItsCode) {
  // Arrange: cereal's bytes of a handle (store token, object, ticket) that
  // names a store this process has not attached.
  ferry::node_config cfg;
  cfg.registry().add_type<ferry::store::object_ref>("test.ref");
  std::vector<std::byte> bytes(24);
  const uint64_t wire[3] = {0x5eed, 7, 0};
  std::memcpy(bytes.data(), wire, sizeof(wire));
  ferry::serializers::payload p;
  p.header.family = "cereal.binary";
  p.header.type_name = "test.ref";
  p.header.frame_sizes = {bytes.size()};
  p.frames.emplace_back(std::move(bytes));
  // Act
  auto ref = cfg.registry().decode<ferry::store::object_ref>(
    p, ferry::serializers::decode_options{});
  // Assert: the store's error, not a generic decode failure.
  ASSERT_FALSE(ref);
  EXPECT_EQ(ref.error(), caf::make_error(ferry::store::errc::store_not_attached,
                                         ref.error().context()))
    << ferry::render(ref.error());
  EXPECT_NE(ferry::render(ref.error()).find("token 24301"), std::string::npos)
    << ferry::render(ref.error());
}

TEST(node, RemoteActorOnClosedPortFailsWithConnectError) {
  // Arrange
  ferry::node_config cfg;
  cfg.store_enabled = false;
  auto sut = ferry::node::start(cfg);
  ASSERT_TRUE(sut);
  // Act: port 1 on loopback has no listener for an unprivileged test.
  auto proxy = (*sut)->remote_actor("127.0.0.1", 1);
  // Assert
  ASSERT_FALSE(proxy);
  EXPECT_EQ(proxy.error().category(), caf::atom("ferry_fw"));
}

TEST(node_config, EveryLinkOptionCanBeSetByFlag) {
  // Arrange
  ferry::node_config sut;
  // Act
  auto err = parse(sut, "",
                   {"--ferry.link.compression=zstd",
                    "--ferry.link.send-timeout=5s",
                    "--ferry.link.chunks-in-flight=2",
                    "--ferry.link.pull-threshold=1024",
                    "--ferry.link.batch-messages=8",
                    "--ferry.link.batch-gap=1ms",
                    "--ferry.store.disabled", "--ferry.store.strict-refs",
                    "--ferry.store.prefault", "--ferry.store.persistent"});
  ASSERT_FALSE(err) << ferry::render(err);
  ASSERT_FALSE(sut.finalize());
  // Assert
  EXPECT_EQ(sut.default_link.compression, ferry::compression::zstd);
  EXPECT_EQ(sut.default_link.send_timeout, std::chrono::seconds{5});
  EXPECT_EQ(sut.default_link.chunks_in_flight, 2u);
  EXPECT_EQ(sut.default_link.pull_threshold, 1024u);
  EXPECT_EQ(sut.default_link.batch_messages, 8u);
  EXPECT_EQ(sut.default_link.batch_gap, std::chrono::milliseconds{1});
  EXPECT_FALSE(sut.store_enabled);
  EXPECT_FALSE(sut.allow_out_of_band_ref_serialization);
  EXPECT_TRUE(sut.store_prefault);
  EXPECT_TRUE(sut.store_persistent);
}

TEST(node_config, HeartbeatsAreOnUnlessTheFileFlagsOrCodeSayOtherwise) {
  // Arrange
  using std::chrono::seconds;
  ferry::node_config by_default;
  ferry::node_config by_flag;
  ferry::node_config by_file;
  ferry::node_config by_code;
  by_code.default_link.heartbeat_interval = seconds{3};
  // Act
  load(by_default, "");
  load(by_flag, "", {"--ferry.link.heartbeat-interval=1s"});
  load(by_file, "[ferry.link]\nconnection-timeout = 60s\n");
  load(by_code, "");
  // Assert
  EXPECT_EQ(by_default.default_link.heartbeat_interval, seconds{5});
  EXPECT_EQ(by_default.default_link.connection_timeout, seconds{30});
  EXPECT_EQ(by_flag.default_link.heartbeat_interval, seconds{1});
  EXPECT_EQ(by_file.default_link.connection_timeout, seconds{60});
  EXPECT_EQ(by_file.default_link.heartbeat_interval, seconds{5});
  EXPECT_EQ(by_code.default_link.heartbeat_interval, seconds{3});
}

TEST(node_config, AConnectionTimeoutNotAboveTheHeartbeatIsAConfigError) {
  // Arrange
  ferry::node_config sut;
  // Act
  auto err = parse_and_finalize(sut, {"--ferry.link.heartbeat-interval=5s",
                                      "--ferry.link.connection-timeout=5s"});
  // Assert
  EXPECT_EQ(err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(err).find("connection-timeout"), std::string::npos)
    << ferry::render(err);
}
