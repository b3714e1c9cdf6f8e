// A node's TLS context (framework/src/transport/tls_context.hpp): no option
// makes no context; each wrong option is refused at `make` with
// `invalid_config` naming the option, the file and the fix; an encrypted
// key opens with its passphrase only, and links; a certificate that peers
// will refuse becomes a warning.
#include "ferry/errc.hpp"

#include <gtest/gtest.h>

#include "tls_pair.hpp"

namespace {

using namespace ferry::test::tls_pair;
using net::tls_context;

std::string text_of(const caf::error& err) {
  return ferry::render(err);
}

/// Expects `make(opts)` to fail with `invalid_config` saying `part`.
void expect_refused(const net::tls_options& opts, const std::string& part) {
  auto sut = tls_context::make(opts);
  ASSERT_FALSE(sut) << "made a context, expected: " << part;
  EXPECT_EQ(sut.error(), ferry::errc::invalid_config);
  EXPECT_NE(text_of(sut.error()).find(part), std::string::npos)
    << text_of(sut.error());
}

TEST(tls_context, NoOptionMakesNoContext) {
  net::tls_options opts;
  opts.node_name = "alpha";

  auto sut = tls_context::make(opts);

  ASSERT_TRUE(sut) << text_of(sut.error());
  EXPECT_EQ(*sut, nullptr);
}

TEST(tls_context, AllThreeFilesMakeAContextWithoutWarnings) {
  auto sut = tls_context::make(options_of("alpha"));

  ASSERT_TRUE(sut) << text_of(sut.error());
  ASSERT_NE(*sut, nullptr);
  EXPECT_TRUE((*sut)->warnings().empty());
  EXPECT_EQ((*sut)->own_problem(), "");
}

TEST(tls_context, APartialConfigurationIsRefusedNamingWhatIsMissing) {
  auto no_key = options_of("alpha");
  no_key.key.clear();
  no_key.ca_file.clear();
  expect_refused(no_key, "ferry.tls.key, ferry.tls.ca-file are missing");
  auto no_cert = options_of("alpha");
  no_cert.certificate.clear();
  expect_refused(no_cert, "ferry.tls.certificate is missing");
  // A passphrase alone turns TLS on too: never a plain fallback.
  net::tls_options passphrase_only;
  passphrase_only.passphrase = "secret";
  expect_refused(passphrase_only,
                 "ferry.tls.certificate, ferry.tls.key, ferry.tls.ca-file are "
                 "missing");
}

TEST(tls_context, AnEncryptedKeyOpensWithItsPassphraseOnly) {
  auto wrong = options_of("locked");
  wrong.passphrase = "wrong";
  expect_refused(wrong, "bad key passphrase");
  expect_refused(options_of("locked"),
                 "the key is encrypted; set ferry.tls.passphrase");
  auto right = options_of("locked");
  right.passphrase = "secret";

  auto sut = tls_context::make(right);

  ASSERT_TRUE(sut) << text_of(sut.error());
  // The key was decrypted once, at make: streams link with it.
  auto fds = connect_pair();
  auto server = (*sut)->make_stream(fds->server, true);
  auto client = context_of("alpha")->make_stream(fds->client, false);
  ASSERT_TRUE(server && client);
  auto done = handshake(**client, **server, *fds);
  EXPECT_TRUE(done.client.ok()) << done.client.error;
  EXPECT_TRUE(done.server.ok()) << done.server.error;
  EXPECT_EQ((*client)->peer_names(), std::vector<std::string>{"locked"});
}

TEST(tls_context, AMissingOrUnreadableFileIsRefusedNamingIt) {
  auto missing_ca = options_of("alpha");
  missing_ca.ca_file = file("nowhere.pem");
  expect_refused(missing_ca, "ferry.tls.ca-file \"" + file("nowhere.pem")
                               + "\": cannot read");
  auto missing_cert = options_of("alpha");
  missing_cert.certificate = file("nowhere.pem");
  expect_refused(missing_cert, "ferry.tls.certificate");
  auto missing_key = options_of("alpha");
  missing_key.key = file("nowhere.key");
  expect_refused(missing_key,
                 "ferry.tls.key \"" + file("nowhere.key") + "\": cannot read");
}

TEST(tls_context, FilesThatAreNotWhatTheirOptionNeedsAreRefused) {
  auto not_pem = options_of("alpha");
  not_pem.certificate = file("ca.cnf");
  expect_refused(not_pem, "not a PEM certificate");
  auto not_key = options_of("alpha");
  not_key.key = file("ca.cnf");
  expect_refused(not_key, "not a PEM private key");
  auto other_key = options_of("alpha");
  other_key.key = file("beta.key");
  expect_refused(other_key, "does not belong to the certificate");
  auto no_ca = options_of("alpha");
  no_ca.ca_file = file("ca.cnf");
  expect_refused(no_ca, "holds no PEM certificate");
}

TEST(tls_context, ACertificatePeersWillRefuseIsAWarning) {
  auto other_name = options_of("beta");
  other_name.node_name = "alpha";

  auto named = tls_context::make(other_name);
  auto expired = tls_context::make(options_of("expired"));
  auto foreign = tls_context::make(options_of("mallory"));

  ASSERT_TRUE(named && expired && foreign);
  ASSERT_EQ((*named)->warnings().size(), 1u);
  EXPECT_NE((*named)->warnings()[0].find(
              "is for 'beta', not for this node's name 'alpha': peers will "
              "refuse its links (name mismatch)"),
            std::string::npos)
    << (*named)->warnings()[0];
  ASSERT_EQ((*expired)->warnings().size(), 1u);
  EXPECT_NE((*expired)->warnings()[0].find(
              "does not verify against ferry.tls.ca-file: expired"),
            std::string::npos)
    << (*expired)->warnings()[0];
  EXPECT_EQ((*expired)->own_problem(), "expired");
  ASSERT_EQ((*foreign)->warnings().size(), 1u);
  EXPECT_NE((*foreign)->warnings()[0].find("unknown CA"), std::string::npos)
    << (*foreign)->warnings()[0];
}

} // namespace
