// TLS links: certificates made at test time by make_test_pki.sh (the
// `openssl` command), nodes in this process and in peer processes. Each
// refusal happens with its reason, from both sides where it has two: the
// node that refuses logs one line and lives on, the other side's call fails
// with `handshake_failed` naming the reason.
#include "netns_fixture.hpp"
#include "tls_nodes.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

namespace {

using namespace std::chrono_literals;
using namespace ferry::test::tls;

// -- configuration ------------------------------------------------------------

TEST(tls_config, APartialConfigurationIsRefusedNamingWhatIsMissing) {
  {
    tls_node n{"alpha", "alpha"};
    n.cfg.tls_key.clear();
    n.cfg.tls_ca_file.clear();
    auto err = n.start();
    EXPECT_EQ(err, ferry::errc::invalid_config);
    EXPECT_NE(text_of(err).find("ferry.tls.key, ferry.tls.ca-file are missing"),
              std::string::npos)
      << text_of(err);
  }
  {
    tls_node n{"alpha", "alpha"};
    n.cfg.tls_certificate.clear();
    auto err = n.start();
    EXPECT_NE(text_of(err).find("ferry.tls.certificate is missing"),
              std::string::npos)
      << text_of(err);
  }
  {
    tls_node n{"alpha", ""};
    n.cfg.tls_ca_file = file("ca.pem");
    auto err = n.start();
    EXPECT_NE(text_of(err).find(
                "ferry.tls.certificate, ferry.tls.key are missing"),
              std::string::npos)
      << text_of(err);
  }
  {
    // A passphrase alone turns TLS on too: never an anonymous fallback.
    tls_node n{"alpha", ""};
    n.cfg.tls_passphrase = "secret";
    EXPECT_EQ(n.start(), ferry::errc::invalid_config);
  }
}

TEST(tls_config, ABadKeyPassphraseIsRefusedAtStart) {
  tls_node wrong{"locked", "locked"};
  wrong.cfg.tls_passphrase = "wrong";
  auto err = wrong.start();
  EXPECT_EQ(err, ferry::errc::invalid_config);
  EXPECT_NE(text_of(err).find("bad key passphrase"), std::string::npos)
    << text_of(err);
  tls_node none{"locked", "locked"};
  err = none.start();
  EXPECT_NE(text_of(err).find("encrypted; set ferry.tls.passphrase"),
            std::string::npos)
    << text_of(err);
  tls_node right{"locked", "locked"};
  right.cfg.tls_passphrase = "secret";
  ASSERT_EQ(right.start(), caf::none);
  // An encrypted key serves links (CAF decrypts it per connection).
  auto port = right.serve();
  tls_node client{"alpha", "alpha"};
  ASSERT_EQ(client.start(), caf::none);
  auto linked = client.node->remote_actor("127.0.0.1", port);
  ASSERT_TRUE(linked) << text_of(linked.error());
}

TEST(tls_config, AKeyOfAnotherCertificateOrAMissingFileIsRefusedAtStart) {
  tls_node mixed{"alpha", "alpha"};
  mixed.cfg.tls_key = file("beta.key");
  auto err = mixed.start();
  EXPECT_EQ(err, ferry::errc::invalid_config);
  EXPECT_NE(text_of(err).find("does not belong to the certificate"),
            std::string::npos)
    << text_of(err);
  tls_node missing{"alpha", "alpha"};
  missing.cfg.tls_ca_file = file("nowhere.pem");
  err = missing.start();
  EXPECT_NE(text_of(err).find("ferry.tls.ca-file"), std::string::npos);
  EXPECT_NE(text_of(err).find("cannot read"), std::string::npos)
    << text_of(err);
  tls_node not_pem{"alpha", "alpha"};
  not_pem.cfg.tls_certificate = file("ca.cnf");
  err = not_pem.start();
  EXPECT_NE(text_of(err).find("not a PEM certificate"), std::string::npos)
    << text_of(err);
}

TEST(tls_config, OptionsComeFromFlags) {
  ferry::node_config cfg;
  std::vector<std::string> args{
    "--ferry.tls.certificate=" + file("alpha.pem"),
    "--ferry.tls.key=" + file("alpha.key"),
    "--ferry.tls.ca-file=" + file("ca.pem"),
    "--ferry.tls.passphrase=x"};
  std::vector<char*> argv{const_cast<char*>("test")};
  for (auto& x : args)
    argv.push_back(x.data());
  ASSERT_EQ(cfg.parse(static_cast<int>(argv.size()), argv.data()), caf::none);
  ASSERT_EQ(cfg.finalize(), caf::none);
  EXPECT_EQ(cfg.tls_certificate, file("alpha.pem"));
  EXPECT_EQ(cfg.tls_key, file("alpha.key"));
  EXPECT_EQ(cfg.tls_ca_file, file("ca.pem"));
  EXPECT_EQ(cfg.tls_passphrase, "x");
}

// -- links --------------------------------------------------------------------

TEST(tls_links, TheRightCALinksAndCarriesRequestsAndLargeFrames) {
  tls_node server{"alpha", "alpha"};
  tls_node client{"beta", "beta"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  auto port = server.serve();
  auto proxy = client.node->remote_actor("127.0.0.1", port);
  ASSERT_TRUE(proxy) << text_of(proxy.error());
  EXPECT_EQ(ask_text(*client.node, *proxy, "hello"), std::string{"olleh"});
  // 8 MiB: above the spill threshold, pulled in chunks over the TLS link
  // (no store on either node).
  auto bytes = ferry::test::make_bytes(size_t{8} << 20);
  caf::scoped_actor self{client.node->system()};
  uint64_t hash = 0;
  self->request(*proxy, 60s, bytes)
    .receive([&](uint64_t x) { hash = x; },
             [&](caf::error& err) { FAIL() << text_of(err); });
  EXPECT_EQ(hash, ferry::test::fnv1a(bytes));
  EXPECT_TRUE(client.node->stats("alpha"));
  EXPECT_TRUE(server.node->stats("beta"));
  EXPECT_EQ(server.refusals(), 0u);
  EXPECT_EQ(client.refusals(), 0u);
}

TEST(tls_links, AnUnknownCAIsRefusedByTheServer) {
  tls_node server{"alpha", "alpha"};
  tls_node client{"mallory", "mallory", "both.pem"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "TLS alert: unknown CA", "unknown CA", true,
                 true);
}

TEST(tls_links, AnUnknownCAIsRefusedByTheClient) {
  tls_node server{"mallory", "mallory", "both.pem"};
  tls_node client{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "unknown CA", "TLS alert: unknown CA");
  EXPECT_EQ(client.refused("unknown CA").size(), 1u);
}

TEST(tls_links, AnExpiredCertificateIsRefusedByTheServer) {
  tls_node server{"alpha", "alpha"};
  tls_node client{"expired", "expired"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  EXPECT_EQ(client.logged("does not verify against ferry.tls.ca-file").size(),
            1u);
  expect_refused(server, client, "expired", "expired", true, true);
}

TEST(tls_links, AnExpiredCertificateIsRefusedByTheClient) {
  tls_node server{"expired", "expired"};
  tls_node client{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "expired", "certificate expired", false);
}

TEST(tls_links, ACertificateNotYetValidIsRefusedByTheServer) {
  tls_node server{"alpha", "alpha"};
  tls_node client{"future", "future"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "not yet valid", "not yet valid", true,
                 true);
}

TEST(tls_links, ACertificateNotYetValidIsRefusedByTheClient) {
  tls_node server{"future", "future"};
  tls_node client{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "not yet valid", "not yet valid", false);
}

/// Expects the link between `server` and `client`, one of them `liar` (a
/// node named alpha holding beta's certificate), to be refused for the name
/// mismatch: the connecting call fails naming it, and `honest` logs it.
void expect_name_mismatch(tls_node& server, tls_node& client,
                          tls_node& honest) {
  auto port = server.serve();
  auto result = client.node->remote_actor("127.0.0.1", port);
  ASSERT_FALSE(result);
  auto text = text_of(result.error());
  EXPECT_EQ(result.error(), ferry::errc::handshake_failed) << text;
  EXPECT_NE(text.find("name mismatch: the peer presents a certificate for "
                      "'beta' but calls itself 'alpha'"),
            std::string::npos)
    << text;
  EXPECT_EQ(honest.refused("name mismatch").size(), 1u);
  EXPECT_FALSE(server.node->stats(client.cfg.node_name));
  EXPECT_FALSE(client.node->stats(server.cfg.node_name));
}

TEST(tls_links, ANodeUsingAnotherNodesCertificateIsRefusedAsClient) {
  tls_node server{"gamma", "gamma"};
  tls_node liar{"alpha", "beta"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(liar.start(), caf::none);
  EXPECT_EQ(liar.logged("not for this node's name 'alpha'").size(), 1u);
  expect_name_mismatch(server, liar, server);
}

TEST(tls_links, ANodeUsingAnotherNodesCertificateIsRefusedAsServer) {
  tls_node liar{"alpha", "beta"};
  tls_node client{"gamma", "gamma"};
  ASSERT_EQ(liar.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_name_mismatch(liar, client, client);
}

TEST(tls_links, APlainPeerIsRefusedByATLSNode) {
  tls_node server{"alpha", "alpha"};
  tls_node client{"plain", ""};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "refuses plain peers", "does not speak TLS");
}

TEST(tls_links, ATLSNodeRefusesAPlainNode) {
  tls_node server{"plain", ""};
  tls_node client{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(client.start(), caf::none);
  expect_refused(server, client, "does not speak TLS (a plain node", "");
  EXPECT_EQ(client.refused("does not speak TLS").size(), 1u);
}

TEST(tls_links, APlainAndATLSPeerLinkToOneNodeThatAllowsThePlainOne) {
  // Arrange: a TLS node whose link config for "plain" allows a plain link;
  // a plain node of that name and a TLS node.
  tls_node server{"alpha", "alpha"};
  ferry::link_config open;
  open.plain = true;
  server.cfg.link("plain", open);
  tls_node plain{"plain", ""};
  tls_node secure{"beta", "beta"};
  for (auto* x : {&server, &plain, &secure})
    ASSERT_EQ(x->start(), caf::none);
  auto port = server.serve();
  // Act
  auto by_plain = plain.node->remote_actor("127.0.0.1", port);
  auto by_tls = secure.node->remote_actor("127.0.0.1", port);
  // Assert: both linked and answered, no refusal anywhere.
  ASSERT_TRUE(by_plain) << text_of(by_plain.error());
  ASSERT_TRUE(by_tls) << text_of(by_tls.error());
  EXPECT_EQ(ask_text(*plain.node, *by_plain, "ab"), std::string{"ba"});
  EXPECT_EQ(ask_text(*secure.node, *by_tls, "cd"), std::string{"dc"});
  EXPECT_EQ(server.node->stats().size(), 2u);
  EXPECT_EQ(server.refusals(), 0u);
}

TEST(tls_links, APlainPeerUnderAnotherNameIsStillRefused) {
  // Arrange: the server allows a plain link to "plain" only.
  tls_node server{"alpha", "alpha"};
  ferry::link_config open;
  open.plain = true;
  server.cfg.link("plain", open);
  tls_node other{"gamma", ""};
  ASSERT_EQ(server.start(), caf::none);
  ASSERT_EQ(other.start(), caf::none);
  // Act and assert: refused, naming the way to allow it.
  expect_refused(server, other, "refuses plain peers", "does not speak TLS");
}

TEST(tls_links, ARawCAFClientIsRefusedAndTheNodeLives) {
  tls_node server{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  auto port = server.serve();
  {
    caf::actor_system_config cfg;
    cfg.load<caf::io::middleman>();
    caf::actor_system sys{cfg};
    auto result = sys.middleman().remote_actor("127.0.0.1", port);
    EXPECT_FALSE(result);
  }
  EXPECT_EQ(server.refused("does not speak TLS").size(), 1u);
  tls_node good{"beta", "beta"};
  ASSERT_EQ(good.start(), caf::none);
  auto linked = good.node->remote_actor("127.0.0.1", port);
  ASSERT_TRUE(linked) << text_of(linked.error());
  EXPECT_EQ(ask_text(*good.node, *linked, "ab"), std::string{"ba"});
}

TEST(tls_links, RandomBytesAreRefusedAndTheNodeLives) {
  tls_node server{"alpha", "alpha"};
  ASSERT_EQ(server.start(), caf::none);
  auto port = server.serve();
  {
    auto fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              0);
    std::mt19937 gen{42};
    std::vector<unsigned char> noise(4096);
    for (auto& x : noise)
      x = static_cast<unsigned char>(gen());
    EXPECT_EQ(send(fd, noise.data(), noise.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(noise.size()));
    // The node closes the connection: read until end of stream.
    char buf[256];
    while (read(fd, buf, sizeof(buf)) > 0) {
      // Whatever the node answers (an alert) is drained.
    }
    close(fd);
  }
  EXPECT_EQ(server.refused("does not speak TLS").size(), 1u);
  tls_node good{"beta", "beta"};
  ASSERT_EQ(good.start(), caf::none);
  auto linked = good.node->remote_actor("127.0.0.1", port);
  ASSERT_TRUE(linked) << text_of(linked.error());
}

// -- peer processes -----------------------------------------------------------

/// The node in this process, named `name` and holding `name`'s
/// certificate, beside peer processes (node_fixture or netns_fixture).
template <class Base>
class tls_fixture : public Base {
protected:
  /// Starts the local node (with the fixture's store); null on failure.
  ferry::node* start_local(const std::string& name) {
    auto& cfg = this->cfg;
    cfg.node_name = name;
    cfg.tls_certificate = file(name + ".pem");
    cfg.tls_key = file(name + ".key");
    cfg.tls_ca_file = file("ca.pem");
    cfg.store_name = this->store_name_;
    cfg.store_capacity = this->store_bytes_;
    ferry::test::register_test_types(cfg);
    auto started = ferry::node::start(cfg);
    EXPECT_TRUE(started) << text_of(started.error());
    if (!started)
      return nullptr;
    this->local_ = std::move(*started);
    return this->local_.get();
  }
};

/// The ferry.tls flags of a peer holding `name`'s certificate and trusting
/// the CA in `ca`.
std::vector<std::string> tls_flags(const std::string& name,
                                   const std::string& ca = "ca.pem") {
  return {"--ferry.tls.certificate=" + file(name + ".pem"),
          "--ferry.tls.key=" + file(name + ".key"),
          "--ferry.tls.ca-file=" + file(ca)};
}

class tls_peers : public tls_fixture<ferry::test::node_fixture> {};

TEST_F(tls_peers, APeerProcessLinksOverTLSAndCarries64MiB) {
  auto& p = start_peer("alpha", tls_flags("alpha"), true);
  ASSERT_NE(p.port, 0);
  auto* local = start_local("beta");
  ASSERT_NE(local, nullptr);
  auto proxy = local->remote_actor("127.0.0.1", p.port);
  ASSERT_TRUE(proxy) << text_of(proxy.error());
  auto reply = ask<std::string>(*proxy, std::string{"tls"});
  ASSERT_TRUE(reply) << text_of(reply.error());
  EXPECT_EQ(*reply, "slt");
  // 64 MiB to a peer with a store of its own: pulled over the TLS link.
  auto bytes = ferry::test::make_bytes(size_t{64} << 20);
  auto hash = ask<uint64_t>(*proxy, bytes);
  ASSERT_TRUE(hash) << text_of(hash.error());
  EXPECT_EQ(*hash, ferry::test::fnv1a(bytes));
}

TEST_F(tls_peers, APeerProcessWithAnUnknownCAIsRefused) {
  auto& p = start_peer("mallory", tls_flags("mallory", "other.pem"), true);
  ASSERT_NE(p.port, 0);
  auto* local = start_local("beta");
  ASSERT_NE(local, nullptr);
  auto proxy = local->remote_actor("127.0.0.1", p.port);
  ASSERT_FALSE(proxy);
  EXPECT_NE(text_of(proxy.error()).find("unknown CA"), std::string::npos)
    << text_of(proxy.error());
  // The peer lives on.
  p.process->write_line("rss");
  EXPECT_TRUE(p.process->wait_for("rss ", 10s));
}

class tls_netns : public tls_fixture<ferry::test::netns_fixture> {};

TEST_F(tls_netns, TheRightCALinksAcrossHostsAndCarries64MiB) {
  FERRY_RUN_WITH_NETWORK_NAMESPACES();
  if (auto reason = set_up(); !reason.empty())
    FERRY_SKIP_OR_FAIL(reason);
  setenv("FERRY_TEST_PUBLISH_ADDRESS", peer_address_.c_str(), 1);
  std::vector<std::string> args{"netns", "exec", ns_, FERRY_TEST_NODE,
                                "--ferry.node-name=alpha",
                                "--ferry.host-id=far-host",
                                "--ferry.store.name=" + store_name_ + "-far"};
  for (auto& x : tls_flags("alpha"))
    args.push_back(x);
  ferry::test::child_process peer{ferry::test::ip_tool(), args};
  unsetenv("FERRY_TEST_PUBLISH_ADDRESS");
  auto port = peer.wait_for("port ");
  ASSERT_TRUE(port) << "peer in the namespace did not start";
  auto* local = start_local("beta");
  ASSERT_NE(local, nullptr);
  auto sut = local->remote_actor(peer_address_,
                                 static_cast<uint16_t>(std::stoi(*port)));
  ASSERT_TRUE(sut) << text_of(sut.error());
  auto text = ask<std::string>(*sut, std::string{"netns"});
  ASSERT_TRUE(text) << text_of(text.error());
  EXPECT_EQ(*text, "snten");
  auto payload = ferry::test::make_bytes(size_t{64} << 20);
  auto hash = ask<uint64_t>(*sut, payload);
  ASSERT_TRUE(hash) << text_of(hash.error());
  EXPECT_EQ(*hash, ferry::test::fnv1a(payload));
  auto stats = local_->stats("alpha");
  ASSERT_TRUE(stats);
  EXPECT_FALSE(stats->same_host);
  EXPECT_EQ(stats->bytes_pulled_by_peer, uint64_t{64} << 20);
  peer.close_stdin();
  EXPECT_TRUE(peer.wait(10s).ok());
}

} // namespace
