// One store object sent to nodes on three other hosts: each receiver pulls
// it from the node that got it before (the relay hint of its frame), so the
// owner sends it about once, and every receiver reads it whole. A node
// relays an object only while its host holds it: once its receiver let it
// go, and without a link to the node before, a receiver pulls from the
// owner.
//
// The local node owns the object; B, C and D are peer processes with
// stores of their own (hosts of their own, as far as ferry knows), linked
// to each other where a test says so.
#include "node_fixture.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

/// Returns the number after `key=` in a peer's "link" line.
std::optional<uint64_t> field(const std::string& line, const std::string& key) {
  std::istringstream in{line};
  std::string word;
  while (in >> word)
    if (word.starts_with(key + "="))
      return std::stoull(word.substr(key.size() + 1));
  return std::nullopt;
}

/// Returns `key` of the link to `other` in `p`'s stats (0 when missing).
uint64_t link_field(peer& p, const std::string& other, const std::string& key) {
  auto lines = p.stats();
  auto line = lines.find(other);
  if (line == lines.end())
    return 0;
  return field(line->second, key).value_or(0);
}

class node_broadcast : public node_fixture {
protected:
  /// 12 MiB of doubles: above the 8 MiB pull threshold, three chunks.
  static constexpr size_t count = size_t{3} << 19;
  static constexpr uint64_t bytes = count * sizeof(double);

  /// Links `from` to `to` (from's side connects).
  static void connect(peer& from, const peer& to) {
    from.process->write_line("connect " + std::to_string(to.port));
    auto answer = from.process->read_line(30s);
    ASSERT_TRUE(answer);
    ASSERT_EQ(*answer, "connected");
  }

  /// Returns the array every receiver gets, in the local node's store.
  ferry::store::shared_array<double> make_array() {
    std::vector<double> values(count);
    for (size_t i = 0; i < count; ++i)
      values[i] = static_cast<double>(i);
    auto array = ferry::store::make_shared_array<double>(*local().store(),
                                                         values);
    EXPECT_TRUE(array) << ferry::render(array.error());
    return std::move(*array);
  }

  /// The sum a receiver reads from the whole array.
  static std::string expected_sum() {
    return std::to_string(static_cast<double>(count * (count - 1) / 2));
  }

  /// Sends `array` to each of `receivers` once the one before answered;
  /// returns their answers (an error's text for a failure).
  std::vector<std::string>
  send_in_turn(const std::vector<caf::actor>& receivers,
               const ferry::store::shared_array<double>& array) {
    std::vector<std::string> answers;
    for (auto& receiver : receivers) {
      auto answer = ask<std::string>(receiver, array);
      answers.push_back(answer ? *answer : ferry::render(answer.error()));
    }
    return answers;
  }

  /// Returns the local node's handle of `p`'s echo actor (which lets each
  /// array go once it answered), or of the actor exposed as `name`.
  caf::actor echo_of(const peer& p, const std::string& name = "") {
    auto result = name.empty()
                    ? local().remote_actor("127.0.0.1", p.port)
                    : local().remote_actor("127.0.0.1", p.port, name);
    EXPECT_TRUE(result) << ferry::render(result.error());
    return result ? *result : caf::actor{};
  }
};

} // namespace

TEST_F(node_broadcast, ObjectSentToThreeHostsInTurnLeavesItsOwnerOnce) {
  // Arrange: B, C, D on hosts of their own, each receiving actor keeping
  // what it gets; C links to B, D to C.
  auto& b = start_peer_on_own_host("B");
  auto& c = start_peer_on_own_host("C");
  auto& d = start_peer_on_own_host("D");
  connect(c, b);
  connect(d, c);
  std::vector<caf::actor> receivers{echo_of(b, "hoarder"),
                                    echo_of(c, "hoarder"),
                                    echo_of(d, "hoarder")};
  auto array = make_array();
  // Act: each receiver gets the object once the one before has it.
  auto answers = send_in_turn(receivers, array);
  // Assert: each read the whole array; B pulled it from the owner, C from
  // B and D from C.
  for (auto& answer : answers)
    EXPECT_NE(answer.find(expected_sum()), std::string::npos) << answer;
  EXPECT_EQ(local().stats("B")->bytes_pulled_by_peer, bytes);
  EXPECT_EQ(local().stats("C")->bytes_pulled_by_peer, 0u);
  EXPECT_EQ(local().stats("D")->bytes_pulled_by_peer, 0u);
  EXPECT_EQ(link_field(b, "C", "relayed_to_peer"), bytes);
  EXPECT_EQ(link_field(c, "B", "relayed_by_peer"), bytes);
  EXPECT_EQ(link_field(c, "D", "relayed_to_peer"), bytes);
  EXPECT_EQ(link_field(d, "C", "relayed_by_peer"), bytes);
  // Every transfer is released: the receivers told the owner they are done.
  EXPECT_EQ(local().stats("C")->transfers_held, 0u);
  EXPECT_EQ(local().stats("D")->transfers_held, 0u);
}

TEST_F(node_broadcast, ObjectSentToThreeHostsAtOnceArrivesWholeEverywhere) {
  // Arrange: B, C, D on hosts of their own, all linked to each other.
  auto& b = start_peer_on_own_host("B");
  auto& c = start_peer_on_own_host("C");
  auto& d = start_peer_on_own_host("D");
  connect(c, b);
  connect(d, b);
  connect(d, c);
  std::vector<caf::actor> receivers{echo_of(b), echo_of(c), echo_of(d)};
  auto array = make_array();
  // Act: three requests at once; each receiver pulls while the one before
  // it still lands the chunks (or from the owner, where it is not there
  // yet).
  caf::scoped_actor self{local().system()};
  for (auto& receiver : receivers)
    self->send(receiver, array);
  std::vector<std::string> answers;
  for (size_t i = 0; i < receivers.size(); ++i)
    self->receive([&](const std::string& x) { answers.push_back(x); },
                  [&](const caf::error& err) {
                    answers.push_back(ferry::render(err));
                  },
                  caf::after(60s) >> [&] { answers.push_back("timeout"); });
  // Assert: every receiver read the whole array, and every byte it got came
  // from the owner or from another receiver: three copies in all.
  ASSERT_EQ(answers.size(), 3u);
  for (auto& answer : answers)
    EXPECT_NE(answer.find(expected_sum()), std::string::npos) << answer;
  uint64_t from_owner = 0;
  for (auto* name : {"B", "C", "D"})
    from_owner += local().stats(name)->bytes_pulled_by_peer;
  uint64_t relayed = link_field(c, "B", "relayed_by_peer")
                     + link_field(d, "B", "relayed_by_peer")
                     + link_field(d, "C", "relayed_by_peer")
                     + link_field(b, "C", "relayed_by_peer")
                     + link_field(b, "D", "relayed_by_peer")
                     + link_field(c, "D", "relayed_by_peer");
  EXPECT_EQ(from_owner + relayed, 3 * bytes);
  EXPECT_GE(from_owner, bytes);
}

TEST_F(node_broadcast, ReceiverWithoutLinkToTheNodeBeforePullsFromTheOwner) {
  // Arrange: B and C on hosts of their own, not linked to each other.
  auto& b = start_peer_on_own_host("B");
  auto& c = start_peer_on_own_host("C");
  std::vector<caf::actor> receivers{echo_of(b), echo_of(c)};
  auto array = make_array();
  // Act
  auto answers = send_in_turn(receivers, array);
  // Assert: both read it whole, and pulled it from the owner.
  for (auto& answer : answers)
    EXPECT_NE(answer.find(expected_sum()), std::string::npos) << answer;
  EXPECT_EQ(local().stats("B")->bytes_pulled_by_peer, bytes);
  EXPECT_EQ(local().stats("C")->bytes_pulled_by_peer, bytes);
}

TEST_F(node_broadcast, ReceiverAfterOneThatLetTheObjectGoPullsFromTheOwner) {
  // Arrange: B and C on hosts of their own, linked; B's receiving actor
  // lets each array go once it answered.
  auto& b = start_peer_on_own_host("B");
  auto& c = start_peer_on_own_host("C");
  connect(c, b);
  std::vector<caf::actor> receivers{echo_of(b), echo_of(c)};
  auto array = make_array();
  // Act
  auto answers = send_in_turn(receivers, array);
  // Assert: B's host no longer held the object, so relaying kept nothing
  // alive there and C pulled it whole from the owner.
  for (auto& answer : answers)
    EXPECT_NE(answer.find(expected_sum()), std::string::npos) << answer;
  EXPECT_EQ(local().stats("B")->bytes_pulled_by_peer, bytes);
  EXPECT_EQ(local().stats("C")->bytes_pulled_by_peer, bytes);
  EXPECT_EQ(link_field(c, "B", "relayed_by_peer"), 0u);
}
