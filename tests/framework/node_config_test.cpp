// node_config: options from a config file and flags, per-link sections,
// and starting a node with no configuration at all.
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
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>

#if defined(__GLIBC__)
#  include <malloc.h>
#endif

namespace {

caf::error parse(ferry::node_config& cfg, const std::string& ini,
                 std::vector<std::string> args = {}) {
  std::istringstream in{ini};
  return cfg.parse(std::move(args), in);
}

/// Parses `ini` and `args` into `cfg` and finalizes it; fails the test on
/// an error.
void load(ferry::node_config& cfg, const std::string& ini,
          std::vector<std::string> args = {}) {
  ASSERT_FALSE(parse(cfg, ini, std::move(args)));
  ASSERT_FALSE(cfg.finalize());
}

/// Parses `args` into `cfg` and returns what finalizing says.
caf::error parse_and_finalize(ferry::node_config& cfg,
                              std::vector<std::string> args) {
  if (auto err = parse(cfg, "", std::move(args)))
    return err;
  return cfg.finalize();
}

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

TEST(node_config, KeepMallocDefaultsTurnsTuningOffByFlagOrFile) {
  // Arrange
  ferry::node_config by_default;
  ferry::node_config by_flag;
  ferry::node_config by_file;
  // Act
  load(by_default, "");
  load(by_flag, "", {"--ferry.keep-malloc-defaults"});
  load(by_file, "[ferry]\nkeep-malloc-defaults = true\n");
  // Assert
  EXPECT_TRUE(by_default.tune_malloc);
  EXPECT_FALSE(by_flag.tune_malloc);
  EXPECT_FALSE(by_file.tune_malloc);
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

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)                      \
  && !defined(__SANITIZE_THREAD__)
/// Unsets the variables that make a node leave malloc alone, for one scope
/// (glibc read them at start-up already; the node reads them when it starts,
/// which is what this test controls).
class without_malloc_environment {
public:
  without_malloc_environment() {
    for (auto* name : names)
      if (auto* value = std::getenv(name)) {
        saved_.emplace_back(name, value);
        unsetenv(name);
      }
  }

  ~without_malloc_environment() {
    for (auto& [name, value] : saved_)
      setenv(name.c_str(), value.c_str(), 1);
  }

private:
  static constexpr const char* names[] = {
    "GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"};
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(node, StartingANodeKeepsMidSizedBuffersInTheHeap) {
  // Arrange (each ctest case is a process of its own: no node started
  // before this one with other variables)
  without_malloc_environment clean;
  ferry::node_config cfg;
  cfg.store_enabled = false;
  auto sut = ferry::node::start(cfg);
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto mapped_before = mallinfo2().hblks;
  // Act: glibc's default (128 KiB, raised only after such a block was freed)
  // would give 16 MiB fresh mmap()ed pages.
  auto* block = static_cast<char*>(std::malloc(16 << 20));
  ASSERT_NE(block, nullptr);
  block[0] = 1;
  auto mapped_after = mallinfo2().hblks;
  std::free(block);
  // Assert
  EXPECT_EQ(mapped_after, mapped_before);
}
#endif

TEST(node_config, VectorPoolIsSetByFlagOrFile) {
  // Arrange
  ferry::node_config by_default;
  ferry::node_config by_flag;
  ferry::node_config by_file;
  // Act
  load(by_default, "");
  load(by_flag, "", {"--ferry.vector-pool.max-bytes=0"});
  load(by_file, "[ferry.vector-pool]\nmin-bytes = 4096\n"
                "max-bytes = 8192\nmax-idle = 5s\n");
  // Assert
  EXPECT_EQ(by_default.vector_pool.min_bytes, uint64_t{1} << 20);
  EXPECT_EQ(by_default.vector_pool.max_bytes, uint64_t{1} << 30);
  EXPECT_EQ(by_default.vector_pool.max_idle, std::chrono::seconds{10});
  EXPECT_EQ(by_flag.vector_pool.max_bytes, 0u);
  EXPECT_EQ(by_file.vector_pool.min_bytes, 4096u);
  EXPECT_EQ(by_file.vector_pool.max_bytes, 8192u);
  EXPECT_EQ(by_file.vector_pool.max_idle, std::chrono::seconds{5});
}

TEST(node_config, SizesTakeUnitsInFlagsAndFile) {
  // Arrange
  ferry::node_config by_flag;
  ferry::node_config by_file;
  ferry::node_config by_peer;
  // Act
  load(by_flag, "",
       {"--ferry.store.capacity=256MiB", "--ferry.link.window-bytes=64KiB",
        "--ferry.link.spill-threshold=1 MB", "--ferry.link.chunk-size=4096",
        "--ferry.vector-pool.max-bytes=2gib"});
  load(by_file, "[ferry.store]\ncapacity = \"2GiB\"\n"
                "[ferry.link]\nmax-message-size = \"1TiB\"\n"
                "pull-threshold = 65536\nmax-held-bytes = \"12B\"\n"
                "compression-threshold = \"3kB\"\n");
  load(by_peer, "[ferry.links]\nnode-b = { window-bytes = \"8MiB\" }\n");
  // Assert
  EXPECT_EQ(by_flag.store_capacity, uint64_t{256} << 20);
  EXPECT_EQ(by_flag.default_link.window_bytes, uint64_t{64} << 10);
  EXPECT_EQ(by_flag.default_link.spill_threshold, 1000000u);
  EXPECT_EQ(by_flag.default_link.chunk_size, 4096u);
  EXPECT_EQ(by_flag.vector_pool.max_bytes, uint64_t{2} << 30);
  EXPECT_EQ(by_file.store_capacity, uint64_t{2} << 30);
  EXPECT_EQ(by_file.default_link.max_message_size, uint64_t{1} << 40);
  EXPECT_EQ(by_file.default_link.pull_threshold, 65536u);
  EXPECT_EQ(by_file.default_link.max_held_bytes, 12u);
  EXPECT_EQ(by_file.default_link.compression_threshold, 3000u);
  EXPECT_EQ(by_peer.link_for("node-b").window_bytes, uint64_t{8} << 20);
}

TEST(node_config, MalformedSizeNamesOptionAndForms) {
  struct bad_case {
    std::vector<std::string> args;
    std::string ini;
    std::string named;
  };
  std::vector<bad_case> cases{
    {{"--ferry.store.capacity=256MB/s"}, "", "ferry.store.capacity"},
    {{"--ferry.store.capacity=lots"}, "", "ferry.store.capacity"},
    {{"--ferry.store.capacity=1.5GiB"}, "", "ferry.store.capacity"},
    {{"--ferry.store.capacity=99999999999999999999"}, "",
     "ferry.store.capacity"},
    {{"--ferry.store.capacity=17179869184TiB"}, "", "ferry.store.capacity"},
    {{"--ferry.link.window-bytes=64K"}, "", "window-bytes"},
    {{}, "[ferry.link]\nchunk-size = -4\n", "chunk-size"},
    {{}, "[ferry.vector-pool]\nmin-bytes = \"1 PiB\"\n",
     "ferry.vector-pool.min-bytes"},
  };
  for (auto& c : cases) {
    // Arrange
    ferry::node_config cfg;
    ASSERT_FALSE(parse(cfg, c.ini, c.args)) << c.named;
    // Act
    auto err = cfg.finalize();
    // Assert
    ASSERT_TRUE(err) << c.named;
    EXPECT_EQ(err, ferry::errc::invalid_config);
    auto text = ferry::render(err);
    EXPECT_NE(text.find(c.named), std::string::npos) << text;
    EXPECT_NE(text.find("256MiB, 2GiB, 64KiB"), std::string::npos) << text;
  }
}

TEST(node_config, BadVectorPoolSettingFailsNamingIt) {
  ferry::node_config unknown;
  ferry::node_config no_idle;
  ASSERT_FALSE(parse(unknown, "[ferry.vector-pool]\nmax-byte = 1\n"));
  ASSERT_FALSE(parse(no_idle, "[ferry.vector-pool]\nmax-idle = 0s\n"));
  auto err = unknown.finalize();
  EXPECT_EQ(err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(err).find("ferry.vector-pool.max-byte"),
            std::string::npos)
    << ferry::render(err);
  err = no_idle.finalize();
  EXPECT_EQ(err, ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(err).find("max-idle must be positive"),
            std::string::npos)
    << ferry::render(err);
}

TEST(node, StartingANodeSetsTheVectorPoolLimits) {
  // Arrange
  ferry::node_config cfg;
  cfg.store_enabled = false;
  cfg.vector_pool.min_bytes = 12345;
  cfg.vector_pool.max_bytes = 67890;
  // Act
  auto sut = ferry::node::start(cfg);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  auto limits = ferry::serializers::vector_pool_config();
  EXPECT_EQ(limits.min_bytes, 12345u);
  EXPECT_EQ(limits.max_bytes, 67890u);
  ferry::serializers::vector_pool_config({});
}

TEST(node, NodeWithOtherVectorPoolLimitsWarnsNamingTheNodeThatSetThem) {
  // Arrange
  auto configure = [](ferry::node_config& cfg, std::string name,
                      uint64_t max_bytes) {
    cfg.store_enabled = false;
    cfg.node_name = std::move(name);
    cfg.vector_pool.max_bytes = max_bytes;
  };
  ferry::node_config first_cfg;
  ferry::node_config same_cfg;
  ferry::node_config other_cfg;
  configure(first_cfg, "pool-first", 67890);
  configure(same_cfg, "pool-same", 67890);
  configure(other_cfg, "pool-other", 12345);
  auto first = ferry::node::start(first_cfg);
  ASSERT_TRUE(first) << ferry::render(first.error());
  // Act
  testing::internal::CaptureStderr();
  auto same = ferry::node::start(same_cfg);
  auto same_log = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  auto other = ferry::node::start(other_cfg);
  auto other_log = testing::internal::GetCapturedStderr();
  // Assert: the same limits pass quietly; other ones apply with a warning.
  ASSERT_TRUE(same) << ferry::render(same.error());
  ASSERT_TRUE(other) << ferry::render(other.error());
  EXPECT_EQ(same_log.find("vector-pool"), std::string::npos) << same_log;
  EXPECT_NE(other_log.find("ferry[pool-other]: warning"), std::string::npos)
    << other_log;
  EXPECT_NE(other_log.find("set by node pool-same"), std::string::npos)
    << other_log;
  EXPECT_EQ(ferry::serializers::vector_pool_config().max_bytes, 12345u);
  ferry::serializers::vector_pool_config({});
}
