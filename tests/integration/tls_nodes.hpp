// Nodes with TLS links for the TLS tests: the test PKI (made at test time by
// make_test_pki.sh, the `openssl` command, in a directory of the process's
// own, removed at the end), a node in this process with its log lines
// (`tls_node`), an echo actor, and `expect_refused`, which checks a refusal
// from both sides and that the refusing node then takes a good peer.
// Header-only: inline functions and variables, one PKI per test binary.
#pragma once

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/test/test_bytes.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ferry::test {

namespace fs = std::filesystem;

/// The test PKI: CA "ca" signs alpha, beta, gamma, expired, future and
/// locked (key encrypted with "secret"); CA "other" signs mallory; both.pem
/// trusts both CAs.
/// Whether this process made the test PKI.
inline bool pki_made = false;

inline const fs::path& pki() {
  static fs::path dir = [] {
    auto path = fs::temp_directory_path()
                / ("ferry-tls-" + std::to_string(getpid()));
    fs::remove_all(path);
    auto command = std::string{FERRY_MAKE_TEST_PKI} + " " + path.string()
                   + " alpha beta gamma"
                     " --dates 20200101000000Z 20200102000000Z expired"
                     " --dates 20400101000000Z 20410101000000Z future"
                     " --days 365 --passphrase secret locked --plain-key"
                     " --ca other mallory"
                     " && cat "
                   + (path / "ca.pem").string() + " "
                   + (path / "other.pem").string() + " > "
                   + (path / "both.pem").string();
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("make_test_pki.sh failed");
    pki_made = true;
    return path;
  }();
  return dir;
}

inline std::string file(const std::string& name) {
  return (pki() / name).string();
}

struct pki_cleanup : testing::Environment {
  void TearDown() override {
    std::error_code ignored;
    if (pki_made)
      fs::remove_all(pki(), ignored);
  }
};

[[maybe_unused]] inline auto* cleanup = testing::AddGlobalTestEnvironment(
  new pki_cleanup);

inline caf::behavior echo() {
  return {
    [](const std::string& text) {
      return std::string{text.rbegin(), text.rend()};
    },
    [](const std::vector<std::byte>& bytes) { return ferry::test::fnv1a(bytes); },
  };
}

/// One node in this process, with its log lines.
struct tls_node {
  ferry::node_config cfg;
  std::unique_ptr<ferry::node> node;
  std::mutex mtx;
  std::vector<std::string> lines;

  /// Sets up a node named `name` with the certificate `cert` (none: a plain
  /// node) and the CA file `ca`.
  tls_node(const std::string& name, const std::string& cert,
           const std::string& ca = "ca.pem") {
    cfg.node_name = name;
    cfg.store_enabled = false;
    if (!cert.empty()) {
      cfg.tls_certificate = file(cert + ".pem");
      cfg.tls_key = file(cert + ".key");
      cfg.tls_ca_file = file(ca);
    }
    cfg.log_sink = [this](const std::string& line) {
      std::lock_guard<std::mutex> guard{mtx};
      lines.push_back(line);
    };
  }

  ~tls_node() {
    node.reset();
  }

  /// Starts the node; returns its error (none on success).
  caf::error start() {
    auto result = ferry::node::start(cfg);
    if (!result)
      return std::move(result.error());
    node = std::move(*result);
    return caf::none;
  }

  /// Publishes an echo actor; returns the port.
  uint16_t serve() {
    auto port = node->publish(node->system().spawn(echo));
    EXPECT_TRUE(port) << ferry::render(port.error());
    return port ? *port : 0;
  }

  /// Returns the log lines that contain `text`, waiting up to 10 s for the
  /// first.
  std::vector<std::string> logged(const std::string& text) {
    return logged_with({}, text);
  }

  /// Returns the log lines of TLS refusals that contain `text`, waiting up
  /// to 10 s for the first.
  std::vector<std::string> refused(const std::string& text) {
    return logged_with("TLS: ", text);
  }

  std::vector<std::string> logged_with(const std::string& prefix,
                                       const std::string& text) {
    std::vector<std::string> result;
    for (int i = 0; i < 1000 && result.empty(); ++i) {
      {
        std::lock_guard<std::mutex> guard{mtx};
        for (auto& x : lines)
          if (x.find(prefix) != std::string::npos
              && x.find(text) != std::string::npos)
            result.push_back(x);
      }
      if (result.empty())
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    return result;
  }

  /// Returns the count of log lines of TLS refusals.
  size_t refusals() {
    std::lock_guard<std::mutex> guard{mtx};
    size_t n = 0;
    for (auto& x : lines)
      if (x.find("TLS: ") != std::string::npos)
        ++n;
    return n;
  }
};

inline caf::expected<std::string>
ask_text(ferry::node& from, const caf::actor& whom, const std::string& text) {
  caf::scoped_actor self{from.system()};
  caf::expected<std::string> result{caf::error{}};
  self->request(whom, std::chrono::seconds{30}, text)
    .receive([&](std::string& x) { result = std::move(x); },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

inline std::string text_of(const caf::error& err) {
  return ferry::render(err);
}

/// What the client learns when the server refused its certificate but the
/// server's alert was lost: the server closes the connection with the
/// client's first bytes unread, and the reset that makes can overtake the
/// alert (TLS 1.3: the client has finished its handshake by then).
inline const std::string lost_alert = "no TLS alert saying why arrived";

/// Expects `client` to fail connecting to `server` with `handshake_failed`
/// naming `client_reason` (or, with `alert_may_be_lost`, saying that the
/// server's alert was lost), and `server` to log one line naming
/// `server_reason`; then checks that `server` still takes a good peer.
inline void expect_refused(tls_node& server, tls_node& client,
                    const std::string& client_reason,
                    const std::string& server_reason,
                    bool server_is_valid = true,
                    bool alert_may_be_lost = false) {
  auto port = server.serve();
  auto result = client.node->remote_actor("127.0.0.1", port);
  ASSERT_FALSE(result) << "the link was made";
  EXPECT_EQ(result.error(), ferry::errc::handshake_failed)
    << text_of(result.error());
  auto text = text_of(result.error());
  EXPECT_TRUE(text.find(client_reason) != std::string::npos
              || (alert_may_be_lost
                  && text.find(lost_alert) != std::string::npos))
    << text;
  if (!server_reason.empty()) {
    auto lines = server.refused(server_reason);
    EXPECT_EQ(lines.size(), 1u) << "server log lines with \"" << server_reason
                                << "\": " << lines.size();
    EXPECT_EQ(server.refusals(), 1u);
  }
  // The server lives on and links with a good peer.
  if (!server_is_valid)
    return;
  tls_node good{"gamma", server.cfg.tls_certificate.empty() ? "" : "gamma",
                "both.pem"};
  ASSERT_EQ(good.start(), caf::none);
  auto linked = good.node->remote_actor("127.0.0.1", port);
  ASSERT_TRUE(linked) << text_of(linked.error());
  EXPECT_EQ(ask_text(*good.node, *linked, "abc"), std::string{"cba"});
}

} // namespace ferry::test
