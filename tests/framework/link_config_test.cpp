// link_config: defaults and reading per-link settings.
#include "ferry/errc.hpp"
#include "ferry/link_config.hpp"

#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <gtest/gtest.h>

namespace {

caf::config_value strings(std::vector<std::string> xs) {
  caf::config_value::list result;
  for (auto& x : xs)
    result.emplace_back(std::move(x));
  return caf::config_value{std::move(result)};
}

} // namespace

TEST(link_config, DefaultsNeedNoConfiguration) {
  // Arrange & Act
  ferry::link_config sut;
  // Assert
  EXPECT_EQ(sut.spill_threshold, 100u * 1024u);
  EXPECT_EQ(sut.serializers, ferry::link_config::default_families());
  EXPECT_EQ(sut.deserializers, ferry::link_config::default_families());
  EXPECT_EQ(sut.compression, ferry::compression::none);
  EXPECT_GT(sut.window_bytes, 0u);
}

TEST(link_config, SectionOverridesOnlyTheKeysItNames) {
  // Arrange
  caf::settings section;
  section["serializers"] = strings({"cereal.portable", "msgpack"});
  section["spill-threshold"] = caf::config_value{int64_t{4096}};
  section["compression"] = caf::config_value{std::string{"zstd"}};
  ferry::link_config base;
  base.window_messages = 7;
  // Act
  auto sut = ferry::link_config::from_settings(section, base);
  // Assert
  ASSERT_TRUE(sut) << ferry::render(sut.error());
  EXPECT_EQ(sut->serializers,
            (std::vector<std::string>{"cereal.portable", "msgpack"}));
  EXPECT_EQ(sut->spill_threshold, 4096u);
  EXPECT_EQ(sut->compression, ferry::compression::zstd);
  EXPECT_EQ(sut->window_messages, 7u);
  EXPECT_EQ(sut->deserializers, base.deserializers);
}

TEST(link_config, UnknownKeyIsAnErrorNamingTheKnownOnes) {
  // Arrange
  caf::settings section;
  section["serialisers"] = strings({"msgpack"});
  // Act
  auto sut = ferry::link_config::from_settings(section, {});
  // Assert
  ASSERT_FALSE(sut);
  auto text = ferry::render(sut.error());
  EXPECT_NE(text.find("serialisers"), std::string::npos) << text;
  EXPECT_NE(text.find("deserializers"), std::string::npos) << text;
}

TEST(link_config, WrongValueTypesAreErrors) {
  // Arrange
  caf::settings not_a_list;
  not_a_list["serializers"] = caf::config_value{std::string{"msgpack"}};
  caf::settings negative;
  negative["spill-threshold"] = caf::config_value{int64_t{-1}};
  caf::settings bad_codec;
  bad_codec["compression"] = caf::config_value{std::string{"gzip"}};
  // Act & Assert
  EXPECT_FALSE(ferry::link_config::from_settings(not_a_list, {}));
  EXPECT_FALSE(ferry::link_config::from_settings(negative, {}));
  auto codec = ferry::link_config::from_settings(bad_codec, {});
  ASSERT_FALSE(codec);
  EXPECT_NE(ferry::render(codec.error()).find("gzip"), std::string::npos);
}

TEST(link_config, ZeroWindowIsRejected) {
  // Arrange
  caf::settings section;
  section["window-messages"] = caf::config_value{int64_t{0}};
  // Act
  auto sut = ferry::link_config::from_settings(section, {});
  // Assert
  EXPECT_FALSE(sut);
}

TEST(link_config, MaxSpawnedActorsIsReadAndZeroTurnsSpawnsOff) {
  // Arrange
  caf::settings few;
  few["max-spawned-actors"] = caf::config_value{int64_t{3}};
  caf::settings none;
  none["max-spawned-actors"] = caf::config_value{int64_t{0}};
  caf::settings negative;
  negative["max-spawned-actors"] = caf::config_value{int64_t{-1}};
  // Act
  auto read = ferry::link_config::from_settings(few, {});
  auto off = ferry::link_config::from_settings(none, {});
  auto rejected = ferry::link_config::from_settings(negative, {});
  // Assert
  ASSERT_TRUE(read) << ferry::render(read.error());
  EXPECT_EQ(read->max_spawned_actors, 3u);
  EXPECT_EQ(ferry::link_config{}.max_spawned_actors, 65536u);
  ASSERT_TRUE(off) << ferry::render(off.error());
  EXPECT_EQ(off->max_spawned_actors, 0u);
  ASSERT_FALSE(rejected);
  EXPECT_NE(ferry::render(rejected.error()).find("max-spawned-actors"),
            std::string::npos);
}

TEST(link_config, MaxProxiesIsReadAndZeroIsRejectedNamingTheKey) {
  // Arrange
  caf::settings few;
  few["max-proxies"] = caf::config_value{int64_t{8}};
  caf::settings none;
  none["max-proxies"] = caf::config_value{int64_t{0}};
  // Act
  auto read = ferry::link_config::from_settings(few, {});
  auto rejected = ferry::link_config::from_settings(none, {});
  // Assert
  ASSERT_TRUE(read) << ferry::render(read.error());
  EXPECT_EQ(read->max_proxies, 8u);
  EXPECT_EQ(ferry::link_config{}.max_proxies, 65536u);
  ASSERT_FALSE(rejected);
  EXPECT_NE(ferry::render(rejected.error()).find("max-proxies"),
            std::string::npos);
}

TEST(link_config, MaxHeldLimitsAreReadAndZeroIsRejectedNamingTheKeys) {
  // Arrange
  caf::settings few;
  few["max-held-bytes"] = caf::config_value{int64_t{4096}};
  few["max-held-messages"] = caf::config_value{int64_t{8}};
  caf::settings no_bytes;
  no_bytes["max-held-bytes"] = caf::config_value{int64_t{0}};
  caf::settings no_messages;
  no_messages["max-held-messages"] = caf::config_value{int64_t{0}};
  // Act
  auto read = ferry::link_config::from_settings(few, {});
  auto bytes_rejected = ferry::link_config::from_settings(no_bytes, {});
  auto messages_rejected = ferry::link_config::from_settings(no_messages, {});
  // Assert: read as given; the defaults are four windows.
  ASSERT_TRUE(read) << ferry::render(read.error());
  EXPECT_EQ(read->max_held_bytes, 4096u);
  EXPECT_EQ(read->max_held_messages, 8u);
  ferry::link_config defaults;
  EXPECT_EQ(defaults.max_held_bytes, 4 * defaults.window_bytes);
  EXPECT_EQ(defaults.max_held_messages, 4 * defaults.window_messages);
  for (auto* rejected : {&bytes_rejected, &messages_rejected}) {
    ASSERT_FALSE(*rejected);
    EXPECT_NE(ferry::render(rejected->error()).find("max-held-bytes and "
                                                    "max-held-messages"),
              std::string::npos);
  }
}

TEST(link_config, LaneIsOnByDefaultAndItsSettingsAreRead) {
  // Arrange
  caf::settings off;
  off["lane"] = caf::config_value{false};
  off["lane-bytes"] = caf::config_value{std::string{"1MiB"}};
  off["lane-spin"]
    = caf::config_value{caf::timespan{std::chrono::microseconds{50}}};
  caf::settings plain;
  plain["lane-spin"] = caf::config_value{int64_t{0}};
  // Act
  auto read = ferry::link_config::from_settings(off, {});
  auto read_plain = ferry::link_config::from_settings(plain, {});
  // Assert
  EXPECT_TRUE(ferry::link_config{}.lane);
  EXPECT_EQ(ferry::link_config{}.lane_bytes, uint64_t{8} << 20);
  EXPECT_EQ(ferry::link_config{}.lane_spin, std::chrono::microseconds{200});
  ASSERT_TRUE(read) << ferry::render(read.error());
  EXPECT_FALSE(read->lane);
  EXPECT_EQ(read->lane_bytes, uint64_t{1} << 20);
  EXPECT_EQ(read->lane_spin, std::chrono::microseconds{50});
  ASSERT_TRUE(read_plain) << ferry::render(read_plain.error());
  EXPECT_EQ(read_plain->lane_spin, std::chrono::microseconds{0});
}

TEST(link_config, LaneSpinAboveTenMillisecondsIsRejected) {
  // Arrange
  caf::settings longer;
  longer["lane-spin"]
    = caf::config_value{caf::timespan{std::chrono::milliseconds{11}}};
  // Act
  auto read = ferry::link_config::from_settings(longer, {});
  // Assert
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error(), ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(read.error()).find("lane-spin is 11000us"),
            std::string::npos)
    << ferry::render(read.error());
}

TEST(link_config, LaneBytesOutsideItsRangeOrNoPowerOfTwoAreRejected) {
  // Arrange
  caf::settings odd;
  odd["lane-bytes"] = caf::config_value{int64_t{3} << 20};
  caf::settings tiny;
  tiny["lane-bytes"] = caf::config_value{int64_t{4096}};
  caf::settings word;
  word["lane"] = caf::config_value{std::string{"sometimes"}};
  // Act
  auto odd_read = ferry::link_config::from_settings(odd, {});
  auto tiny_read = ferry::link_config::from_settings(tiny, {});
  auto word_read = ferry::link_config::from_settings(word, {});
  // Assert
  ASSERT_FALSE(odd_read);
  EXPECT_EQ(odd_read.error(), ferry::errc::invalid_config);
  EXPECT_NE(ferry::render(odd_read.error()).find("lane-bytes"),
            std::string::npos);
  EXPECT_FALSE(tiny_read);
  ASSERT_FALSE(word_read);
  EXPECT_NE(ferry::render(word_read.error()).find("lane"), std::string::npos);
}
