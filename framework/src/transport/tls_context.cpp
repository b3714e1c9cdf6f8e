// tls_context: checking a TLS node's credentials and setting up its
// OpenSSL context (see transport/tls_context.hpp).
#include "transport/tls_context.hpp"

#include "ferry/errc.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ferry::detail::net {

namespace {

/// Bytes OpenSSL reads ahead from the socket at most: one `recv` takes up
/// to four full records. Not more: before each record OpenSSL moves the
/// unread rest of its buffer to the front (to align the payload), so the
/// copying grows with the buffer once a reader falls behind: with the
/// buffer full (loopback), 256 KiB costs a fifth more CPU per byte read
/// than 64 KiB, while 32 KiB or OpenSSL's default (one record) cost no less
/// (bench/framework/tls_stream_bench.cpp).
constexpr size_t read_buffer_size = 64 * 1024;

/// TLS 1.3 suites, AES-128-GCM first: as safe as AES-256-GCM for ferry's
/// links and faster per byte (fewer AES rounds).
constexpr const char* tls13_suites = "TLS_AES_128_GCM_SHA256:"
                                     "TLS_AES_256_GCM_SHA384:"
                                     "TLS_CHACHA20_POLY1305_SHA256";

/// TLS 1.2 ciphers: ECDHE key exchange (forward secrecy) and AEAD only.
constexpr const char* tls12_ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:"
                                      "ECDHE-RSA-AES128-GCM-SHA256:"
                                      "ECDHE-ECDSA-AES256-GCM-SHA384:"
                                      "ECDHE-RSA-AES256-GCM-SHA384:"
                                      "ECDHE-ECDSA-CHACHA20-POLY1305:"
                                      "ECDHE-RSA-CHACHA20-POLY1305";

std::string openssl_error() {
  auto text = take_openssl_error();
  return text.empty() ? std::string{"unknown error"} : text;
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

/// Hands OpenSSL the passphrase (never prompting), and notes that the key
/// asked for one.
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
               "it (" +
                 detail + ")");
  return bad(key, path, "not a PEM private key (" + detail + ")");
}

/// Fails naming what is missing when only some of the files are set.
caf::error complete(const tls_options& opts) {
  std::vector<std::string> missing;
  if (opts.certificate.empty())
    missing.emplace_back("ferry.tls.certificate");
  if (opts.key.empty())
    missing.emplace_back("ferry.tls.key");
  if (opts.ca_file.empty())
    missing.emplace_back("ferry.tls.ca-file");
  if (missing.empty())
    return caf::none;
  std::string names;
  for (auto& x : missing)
    names += (names.empty() ? "" : ", ") + x;
  return caf::make_error(
    errc::invalid_config,
    "TLS is configured only in part: " + names +
      (missing.size() == 1 ? " is" : " are") +
      " missing; set ferry.tls.certificate, ferry.tls.key and "
      "ferry.tls.ca-file (and ferry.tls.passphrase for an encrypted "
      "key), or no ferry.tls option for a plain node");
}

/// Sets up `ctx` for ferry's links (see the header); fails only when
/// OpenSSL refuses a setting it should know.
caf::error configure(SSL_CTX* ctx) {
  // Reading the certificate file must never prompt on a terminal (OpenSSL's
  // default for an encrypted PEM block); the key has its own callback.
  SSL_CTX_set_default_passwd_cb(ctx, [](char*, int, int, void*) { return 0; });
  SSL_CTX_set_options(
    ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION |
           SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_ENABLE_KTLS);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                     nullptr);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, read_buffer_size);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_num_tickets(ctx, 0) != 1 ||
      SSL_CTX_set_ciphersuites(ctx, tls13_suites) != 1 ||
      SSL_CTX_set_cipher_list(ctx, tls12_ciphers) != 1)
    return caf::make_error(errc::invalid_config,
                           "OpenSSL refuses ferry's TLS settings: " +
                             openssl_error());
  return caf::none;
}

} // namespace

void tls_context::ctx_deleter::operator()(SSL_CTX* x) const {
  SSL_CTX_free(x);
}

tls_context::~tls_context() = default;

caf::expected<std::shared_ptr<const tls_context>>
tls_context::make(const tls_options& opts) {
  if (!opts.enabled())
    return std::shared_ptr<const tls_context>{};
  if (auto err = complete(opts))
    return err;
  ERR_clear_error();
  std::shared_ptr<tls_context> result{new tls_context};
  result->ctx_.reset(SSL_CTX_new(TLS_method()));
  auto* ctx = result->ctx_.get();
  if (ctx == nullptr)
    return caf::make_error(errc::invalid_config,
                           "OpenSSL cannot make a TLS context: " +
                             openssl_error());
  if (auto err = configure(ctx))
    return err;
  const auto& cert_path = opts.certificate;
  if (auto err = readable("ferry.tls.certificate", cert_path))
    return err;
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_path.c_str()) != 1)
    return bad("ferry.tls.certificate", cert_path,
               "not a PEM certificate (" + openssl_error() + ")");
  auto key = read_key(opts.key, opts.passphrase);
  if (!key)
    return std::move(key.error());
  if (SSL_CTX_use_PrivateKey(ctx, key->get()) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1)
    return bad("ferry.tls.key", opts.key,
               "does not belong to the certificate in ferry.tls.certificate "
               "\"" +
                 cert_path + "\" (" + openssl_error() + ")");
  if (auto err = readable("ferry.tls.ca-file", opts.ca_file))
    return err;
  if (SSL_CTX_load_verify_locations(ctx, opts.ca_file.c_str(), nullptr) != 1)
    return bad("ferry.tls.ca-file", opts.ca_file,
               "holds no PEM certificate (" + openssl_error() + ")");
  // What makes peers refuse this node: a certificate for another name, or
  // one that does not verify against the CAs this node trusts itself.
  auto* leaf = SSL_CTX_get0_certificate(ctx);
  auto names = names_of(leaf);
  if (!opts.node_name.empty() &&
      std::find(names.begin(), names.end(), opts.node_name) == names.end()) {
    std::string listed;
    for (auto& x : names)
      listed += (listed.empty() ? "'" : ", '") + x + "'";
    result->warnings_.push_back(
      "ferry.tls.certificate \"" + cert_path + "\" is for " +
      (listed.empty() ? std::string{"no name"} : listed) +
      ", not for this node's name '" + opts.node_name +
      "': peers will refuse its links (name mismatch)");
  }
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(ctx, &chain);
  auto* check = X509_STORE_CTX_new();
  if (check != nullptr &&
      X509_STORE_CTX_init(check, SSL_CTX_get_cert_store(ctx), leaf, chain) ==
        1 &&
      X509_verify_cert(check) != 1)
    result->warnings_.push_back(
      "ferry.tls.certificate \"" + cert_path +
      "\" does not verify against ferry.tls.ca-file: " +
      describe_x509_error(X509_STORE_CTX_get_error(check)) +
      "; peers that trust the same CAs will refuse it");
  X509_STORE_CTX_free(check);
  ERR_clear_error();
  return std::shared_ptr<const tls_context>{std::move(result)};
}

caf::expected<std::unique_ptr<tls_stream>>
tls_context::make_stream(int fd, bool server) const {
  return tls_stream::make(ctx_.get(), fd, server);
}

std::string tls_context::own_problem() const {
  return validity_problem(SSL_CTX_get0_certificate(ctx_.get()));
}

} // namespace ferry::detail::net
