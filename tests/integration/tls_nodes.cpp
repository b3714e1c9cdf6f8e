// The TLS tests' nodes and PKI (tls_nodes.hpp).
#include "tls_nodes.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/eventually.hpp"
#include "ferry/test/test_bytes.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace ferry::test::tls {

namespace {

/// Whether this process made the test PKI.
bool pki_made = false;

/// Returns the test PKI's directory, made at the first call.
const std::filesystem::path& pki() {
  static std::filesystem::path dir = [] {
    auto path = std::filesystem::temp_directory_path()
                / ("ferry-tls-" + std::to_string(getpid()));
    std::filesystem::remove_all(path);
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

/// Removes the test PKI when the tests end.
struct pki_cleanup : testing::Environment {
  void TearDown() override {
    std::error_code ignored;
    if (pki_made)
      std::filesystem::remove_all(pki(), ignored);
  }
};

[[maybe_unused]] auto* cleanup = testing::AddGlobalTestEnvironment(
  new pki_cleanup);

} // namespace

std::string file(const std::string& name) {
  return (pki() / name).string();
}

caf::behavior echo() {
  return {
    [](const std::string& text) {
      return std::string{text.rbegin(), text.rend()};
    },
    [](const std::vector<std::byte>& bytes) { return fnv1a(bytes); },
  };
}

tls_node::tls_node(const std::string& name, const std::string& cert,
                   const std::string& ca) {
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

tls_node::~tls_node() {
  node.reset();
}

caf::error tls_node::start() {
  auto result = ferry::node::start(cfg);
  if (!result)
    return std::move(result.error());
  node = std::move(*result);
  return caf::none;
}

uint16_t tls_node::serve() {
  auto port = node->publish(node->system().spawn(echo));
  EXPECT_TRUE(port) << ferry::render(port.error());
  return port ? *port : 0;
}

std::vector<std::string> tls_node::logged(const std::string& text) {
  return logged_with({}, text);
}

std::vector<std::string> tls_node::refused(const std::string& text) {
  return logged_with("TLS: ", text);
}

size_t tls_node::refusals() {
  std::lock_guard<std::mutex> guard{mtx};
  size_t n = 0;
  for (auto& x : lines)
    if (x.find("TLS: ") != std::string::npos)
      ++n;
  return n;
}

std::vector<std::string> tls_node::logged_with(const std::string& prefix,
                                               const std::string& text) {
  std::vector<std::string> result;
  ferry::test::eventually([&] {
    std::lock_guard<std::mutex> guard{mtx};
    for (auto& x : lines)
      if (x.find(prefix) != std::string::npos
          && x.find(text) != std::string::npos)
        result.push_back(x);
    return !result.empty();
  });
  return result;
}

caf::expected<std::string>
ask_text(ferry::node& from, const caf::actor& whom, const std::string& text) {
  caf::scoped_actor self{from.system()};
  caf::expected<std::string> result{caf::error{}};
  self->request(whom, std::chrono::seconds{30}, text)
    .receive([&](std::string& x) { result = std::move(x); },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

std::string text_of(const caf::error& err) {
  return ferry::render(err);
}

const std::string lost_alert = "no TLS alert saying why arrived";

void expect_refused(tls_node& server, tls_node& client,
                    const std::string& client_reason,
                    const std::string& server_reason, bool server_is_valid,
                    bool alert_may_be_lost) {
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

} // namespace ferry::test::tls
