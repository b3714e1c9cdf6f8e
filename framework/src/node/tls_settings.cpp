// tls_settings: checking a TLS node's credentials at start (see
// node/tls_settings.hpp).
#include "node/tls_settings.hpp"

#include "node/tls_identity.hpp"

#include "ferry/errc.hpp"
#include "ferry/node_config.hpp"

#include <caf/openssl/manager.hpp>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ferry::detail {

namespace {

/// Empties OpenSSL's error queue of this thread and returns its oldest
/// entry as text (or "unknown error").
std::string openssl_error() {
  auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "unknown error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

caf::error bad(const std::string& key, const std::string& path,
               const std::string& what) {
  return caf::make_error(errc::invalid_config,
                         key + " \"" + path + "\": " + what);
}

/// Fails when `path` cannot be opened for reading.
caf::error readable(const std::string& key, const std::string& path) {
  auto* file = std::fopen(path.c_str(), "r");
  if (file == nullptr)
    return bad(key, path, std::string{"cannot read: "} + std::strerror(errno));
  std::fclose(file);
  return caf::none;
}

/// Hands OpenSSL the passphrase, and notes that the key asked for one.
struct passphrase_source {
  const std::string* passphrase;
  bool asked = false;

  static int supply(char* buf, int size, int, void* self_ptr) {
    auto* self = static_cast<passphrase_source*>(self_ptr);
    self->asked = true;
    auto& text = *self->passphrase;
    if (text.empty() || size <= 0)
      return 0;
    auto n = std::min(text.size(), static_cast<size_t>(size));
    std::memcpy(buf, text.data(), n);
    return static_cast<int>(n);
  }
};

struct ctx_deleter {
  void operator()(SSL_CTX* x) const { SSL_CTX_free(x); }
};

struct key_deleter {
  void operator()(EVP_PKEY* x) const { EVP_PKEY_free(x); }
};

/// Reads the private key at `path`, decrypting it with `passphrase`.
caf::expected<std::unique_ptr<EVP_PKEY, key_deleter>>
read_key(const std::string& path, const std::string& passphrase) {
  const std::string key = "ferry.tls.key";
  if (auto err = readable(key, path))
    return err;
  auto* bio = BIO_new_file(path.c_str(), "r");
  if (bio == nullptr)
    return bad(key, path, "cannot read: " + openssl_error());
  passphrase_source source{&passphrase};
  std::unique_ptr<EVP_PKEY, key_deleter> result{
    PEM_read_bio_PrivateKey(bio, nullptr, passphrase_source::supply, &source)};
  BIO_free(bio);
  if (result) {
    ERR_clear_error();
    return result;
  }
  auto detail = openssl_error();
  if (source.asked && passphrase.empty())
    return bad(key, path, "the key is encrypted; set ferry.tls.passphrase");
  if (source.asked)
    return bad(key, path,
               "bad key passphrase: ferry.tls.passphrase does not decrypt "
               "it ("
                 + detail + ")");
  return bad(key, path, "not a PEM private key (" + detail + ")");
}

} // namespace

void tls_settings::x509_deleter::operator()(X509* cert) const {
  X509_free(cert);
}

tls_settings::~tls_settings() = default;

caf::expected<std::shared_ptr<const tls_settings>>
tls_settings::prepare(node_config& cfg) {
  if (!cfg.tls_enabled())
    return std::shared_ptr<const tls_settings>{};
  std::vector<std::string> missing;
  if (cfg.tls_certificate.empty())
    missing.emplace_back("ferry.tls.certificate");
  if (cfg.tls_key.empty())
    missing.emplace_back("ferry.tls.key");
  if (cfg.tls_ca_file.empty())
    missing.emplace_back("ferry.tls.ca-file");
  if (!missing.empty()) {
    std::string names;
    for (auto& x : missing)
      names += (names.empty() ? "" : ", ") + x;
    return caf::make_error(
      errc::invalid_config,
      "TLS is configured only in part: " + names
        + (missing.size() == 1 ? " is" : " are")
        + " missing; set ferry.tls.certificate, ferry.tls.key and "
          "ferry.tls.ca-file (and ferry.tls.passphrase for an encrypted "
          "key), or no ferry.tls option for a plain node");
  }
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, ctx_deleter> ctx{SSL_CTX_new(TLS_method())};
  if (!ctx)
    return caf::make_error(errc::invalid_config,
                           "OpenSSL cannot make a TLS context: "
                             + openssl_error());
  const auto& cert_path = cfg.tls_certificate;
  if (auto err = readable("ferry.tls.certificate", cert_path))
    return err;
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert_path.c_str()) != 1)
    return bad("ferry.tls.certificate", cert_path,
               "not a PEM certificate (" + openssl_error() + ")");
  auto key = read_key(cfg.tls_key, cfg.tls_passphrase);
  if (!key)
    return std::move(key.error());
  if (SSL_CTX_use_PrivateKey(ctx.get(), key->get()) != 1
      || SSL_CTX_check_private_key(ctx.get()) != 1)
    return bad("ferry.tls.key", cfg.tls_key,
               "does not belong to the certificate in ferry.tls.certificate "
               "\"" + cert_path
                 + "\" (" + openssl_error() + ")");
  if (auto err = readable("ferry.tls.ca-file", cfg.tls_ca_file))
    return err;
  if (SSL_CTX_load_verify_locations(ctx.get(), cfg.tls_ca_file.c_str(),
                                    nullptr)
      != 1)
    return bad("ferry.tls.ca-file", cfg.tls_ca_file,
               "holds no PEM certificate (" + openssl_error() + ")");
  std::shared_ptr<tls_settings> result{new tls_settings};
  auto* leaf = SSL_CTX_get0_certificate(ctx.get());
  X509_up_ref(leaf);
  result->cert_.reset(leaf);
  // What makes peers refuse this node: a certificate for another name, or
  // one that does not verify against the CAs this node trusts itself.
  auto names = tls_identity::names_of(leaf);
  if (std::find(names.begin(), names.end(), cfg.node_name) == names.end()) {
    std::string listed;
    for (auto& x : names)
      listed += (listed.empty() ? "'" : ", '") + x + "'";
    result->warnings_.push_back(
      "ferry.tls.certificate \"" + cert_path + "\" is for "
      + (listed.empty() ? std::string{"no name"} : listed)
      + ", not for this node's name '" + cfg.node_name
      + "': peers will refuse its links (name mismatch)");
  }
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(ctx.get(), &chain);
  auto* check = X509_STORE_CTX_new();
  if (check != nullptr
      && X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(ctx.get()), leaf,
                             chain)
           == 1
      && X509_verify_cert(check) != 1)
    result->warnings_.push_back(
      "ferry.tls.certificate \"" + cert_path
      + "\" does not verify against ferry.tls.ca-file: "
      + tls_identity::describe_x509_error(X509_STORE_CTX_get_error(check))
      + "; peers that trust the same CAs will refuse it");
  X509_STORE_CTX_free(check);
  ERR_clear_error();
  // CAF's module reads these for every connection.
  cfg.openssl_certificate = cfg.tls_certificate;
  cfg.openssl_key = cfg.tls_key;
  cfg.openssl_passphrase = cfg.tls_passphrase;
  cfg.openssl_cafile = cfg.tls_ca_file;
  cfg.openssl_capath.clear();
  cfg.set("middleman.enable-automatic-connections", false);
  if (!cfg.tls_module_loaded) {
    cfg.load<caf::openssl::manager>();
    cfg.tls_module_loaded = true;
  }
  tls_identity::install();
  return std::shared_ptr<const tls_settings>{std::move(result)};
}

std::string tls_settings::own_problem() const {
  if (X509_cmp_current_time(X509_get0_notBefore(cert_.get())) > 0)
    return "not yet valid";
  if (X509_cmp_current_time(X509_get0_notAfter(cert_.get())) < 0)
    return "expired";
  return {};
}

} // namespace ferry::detail
