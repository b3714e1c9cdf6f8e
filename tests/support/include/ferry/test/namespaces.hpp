// Tests that need network namespaces, wherever the machine allows them.
//
// A test that makes network namespaces (veth pairs, bridges, peers started
// with `ip netns exec`) needs to be root of its network stack. As root of
// the machine it makes them directly; otherwise it runs itself again inside
// a user namespace of its own (`unshare --user --map-root-user --mount
// --net`, which Debian allows unprivileged users), where it is root of a
// private network stack and gets a /run of its own for `ip netns`. The
// inner run inherits the environment, so it follows the same rules, and the
// outer run passes, skips or fails as the inner run did.
//
// Where the machine allows neither (an unprivileged container: not root and
// `unshare --user` fails), or the namespaces cannot be set up, the test is
// SKIPPED with the reason, unless FERRY_REQUIRE_PRIVILEGED_TESTS=1 is set
// (CI sets it): then it FAILS with the reason. FERRY_TEST_IP_TOOL, when set,
// replaces the search for iproute2's `ip` (tests of the skip path point it
// at nothing: "", a missing file, or /bin/false).
//
// Usage, in a GoogleTest test body:
//
//     FERRY_RUN_WITH_NETWORK_NAMESPACES();   // returns unless it runs here
//     if (!ip({"netns", "add", ns}))
//       FERRY_SKIP_OR_FAIL("cannot create a network namespace here");
//
// Thread-safety: call from the test's thread only (the functions change the
// process's environment and mounts).
#pragma once

#include <string>
#include <vector>

namespace ferry::test {

/// Returns true if FERRY_REQUIRE_PRIVILEGED_TESTS=1: tests that the machine
/// does not allow fail instead of skipping.
bool privileged_tests_required();

/// Returns the path of iproute2's `ip` (or FERRY_TEST_IP_TOOL), or an empty
/// string if there is none.
std::string ip_tool();

/// Runs `ip args...`; returns true if it exited with code 0 within 10 s.
[[nodiscard]] bool ip(const std::vector<std::string>& args);

/// Where a test that needs network namespaces goes on.
enum class namespace_access {
  /// This process is root of its network stack: the test runs here.
  here,
  /// The test ran again inside a user namespace and passed there.
  passed_inside,
  /// The test ran again inside a user namespace and skipped there.
  skipped_inside,
  /// The test ran again inside a user namespace and failed there.
  failed_inside,
  /// This process cannot make network namespaces.
  unavailable,
};

/// What `network_namespaces` decided, and why (for a skip inside the user
/// namespace, the inner run's skip message).
struct namespace_verdict {
  namespace_access access = namespace_access::unavailable;
  std::string reason;
};

/// Decides where the test named `test_name` ("Suite.Name") goes on: here as
/// root (in the inner run after mounting a tmpfs on /run and bringing up
/// lo), or again inside a user namespace, whose run this waits for. Prints
/// the inner run's output, indented.
namespace_verdict network_namespaces(const std::string& test_name);

} // namespace ferry::test

/// Skips the current test with `reason`, or fails it when
/// FERRY_REQUIRE_PRIVILEGED_TESTS=1.
#define FERRY_SKIP_OR_FAIL(reason)                                             \
  do {                                                                         \
    if (::ferry::test::privileged_tests_required())                            \
      FAIL() << (reason)                                                       \
             << " (a failure, not a skip: FERRY_REQUIRE_PRIVILEGED_TESTS=1)";  \
    else                                                                       \
      GTEST_SKIP() << (reason);                                                \
  } while (false)

/// Runs the rest of the current test where it may make network namespaces:
/// goes on here, or returns from the test body with the outcome of its run
/// inside a user namespace, or skips or fails it (FERRY_SKIP_OR_FAIL) where
/// the machine allows neither.
#define FERRY_RUN_WITH_NETWORK_NAMESPACES()                                    \
  do {                                                                         \
    auto* ferry_info_ = ::testing::UnitTest::GetInstance()                     \
                          ->current_test_info();                               \
    auto ferry_verdict_ = ::ferry::test::network_namespaces(                   \
      std::string{ferry_info_->test_suite_name()} + "."                        \
      + ferry_info_->name());                                                  \
    switch (ferry_verdict_.access) {                                           \
      case ::ferry::test::namespace_access::here:                              \
        break;                                                                 \
      case ::ferry::test::namespace_access::passed_inside:                     \
        return;                                                                \
      case ::ferry::test::namespace_access::skipped_inside:                    \
        FERRY_SKIP_OR_FAIL("skipped inside the user namespace: "               \
                           + ferry_verdict_.reason);                           \
      case ::ferry::test::namespace_access::failed_inside:                     \
        FAIL() << "failed inside the user namespace: "                         \
               << ferry_verdict_.reason;                                       \
      case ::ferry::test::namespace_access::unavailable:                       \
        FERRY_SKIP_OR_FAIL(ferry_verdict_.reason);                             \
    }                                                                          \
  } while (false)
