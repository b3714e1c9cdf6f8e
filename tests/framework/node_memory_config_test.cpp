// node_config and memory: malloc tuning, the vector pool's limits, and sizes
// with units in flags and the file; starting a node applies them.
#include "config_parsing.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/node_config.hpp"

#include "ferry/serializers/payload.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#  include <malloc.h>
#endif

using ferry::test::load;
using ferry::test::parse;
using ferry::test::parse_and_finalize;

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
