// tls_identity: OpenSSL's callbacks and the records they keep (see
// node/tls_identity.hpp).
#include "node/tls_identity.hpp"

#include <caf/io/network/native_socket.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

namespace ferry::detail::tls_identity {

namespace {

/// The records and the SSL objects they belong to; `settled` is notified
/// when a handshake finishes or an SSL is freed.
struct record_table {
  std::mutex mtx;
  std::condition_variable settled;
  std::deque<record> records;
  std::map<const SSL*, uint64_t> live;
  uint64_t next_seq = 1;

  /// Returns the record `seq`, or null (dropped). Requires `mtx`.
  record* find(uint64_t seq) {
    for (auto& x : records)
      if (x.seq == seq)
        return &x;
    return nullptr;
  }

  /// Returns the record of `ssl`, or null (dropped or not seen). Requires
  /// `mtx`.
  record* find(const SSL* ssl) {
    auto i = live.find(ssl);
    return i != live.end() ? find(i->second) : nullptr;
  }
};

struct listener_table {
  std::mutex mtx;
  std::map<uint64_t, std::pair<uint16_t, std::function<void(const record&)>>>
    entries;
  uint64_t next_key = 1;
};

record_table& table() {
  static auto* result = new record_table;
  return *result;
}

listener_table& listeners() {
  static auto* result = new listener_table;
  return *result;
}

/// Fills in the addresses of `x` from the socket of `ssl` (set by CAF
/// before its handshake starts).
void fill_addresses(record& x, const SSL* ssl) {
  if (x.remote_port != 0)
    return;
  auto fd = SSL_get_fd(ssl);
  if (fd < 0)
    return;
  namespace net = caf::io::network;
  auto addr = net::remote_addr_of_fd(fd);
  auto port = net::remote_port_of_fd(fd);
  auto local = net::local_port_of_fd(fd);
  if (addr && port && local) {
    x.remote_addr = *addr;
    x.remote_port = *port;
    x.local_port = *local;
    x.server = SSL_is_server(ssl) != 0;
  }
}

/// Runs `fn` on the record of `ssl`, if it has one.
template <class F>
void update(const SSL* ssl, F fn) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  if (auto* x = t.find(ssl)) {
    fill_addresses(*x, ssl);
    fn(*x);
  }
}

int on_verify(int ok, X509_STORE_CTX* store) {
  if (ok == 0) {
    auto* ssl = static_cast<SSL*>(
      X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    auto err = X509_STORE_CTX_get_error(store);
    if (ssl != nullptr)
      update(ssl, [err](record& x) {
        if (x.x509_error == 0)
          x.x509_error = err;
      });
  }
  return ok;
}

void on_info(const SSL* ssl, int where, int ret) {
  if ((where & SSL_CB_ALERT) != 0) {
    if ((ret >> 8) != SSL3_AL_FATAL)
      return;
    auto desc = ret & 0xff;
    auto read = (where & SSL_CB_READ) != 0;
    update(ssl, [=](record& x) {
      (read ? x.alert_received : x.alert_sent) = desc;
    });
  } else if ((where & SSL_CB_HANDSHAKE_DONE) != 0) {
    auto* cert = SSL_get0_peer_certificate(ssl);
    auto names = cert != nullptr ? names_of(cert)
                                 : std::vector<std::string>{};
    auto verified = SSL_get_verify_result(ssl);
    update(ssl, [&](record& x) {
      x.done = true;
      x.names = std::move(names);
      x.verify_result = cert != nullptr ? verified : -1;
    });
    table().settled.notify_all();
  } else if ((where & (SSL_CB_HANDSHAKE_START | SSL_CB_LOOP)) != 0) {
    update(ssl, [](record&) {});
  }
}

void on_message(int write_p, int, int content_type, const void*, size_t,
                SSL* ssl, void*) {
  if (write_p == 0
      && (content_type == SSL3_RT_HANDSHAKE || content_type == SSL3_RT_ALERT))
    update(ssl, [](record& x) { x.peer_spoke_tls = true; });
}

void on_new_ssl(void* parent, void*, CRYPTO_EX_DATA*, int, long, void*) {
  auto* ssl = static_cast<SSL*>(parent);
  SSL_set_verify(ssl, SSL_get_verify_mode(ssl), on_verify);
  SSL_set_info_callback(ssl, on_info);
  SSL_set_msg_callback(ssl, on_message);
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  record x;
  x.seq = t.next_seq++;
  t.live[ssl] = x.seq;
  t.records.push_back(std::move(x));
  while (t.records.size() > max_records) {
    auto seq = t.records.front().seq;
    t.records.pop_front();
    for (auto i = t.live.begin(); i != t.live.end(); ++i)
      if (i->second == seq) {
        t.live.erase(i);
        break;
      }
  }
}

void on_free_ssl(void* parent, void*, CRYPTO_EX_DATA*, int, long, void*) {
  auto* ssl = static_cast<SSL*>(parent);
  std::optional<record> failed;
  {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mtx};
    if (auto* x = t.find(ssl); x != nullptr) {
      x->freed = true;
      if (!x->done && x->server)
        failed = *x;
    }
    t.live.erase(ssl);
  }
  table().settled.notify_all();
  if (!failed || failed->local_port == 0)
    return;
  auto& l = listeners();
  std::lock_guard<std::mutex> guard{l.mtx};
  for (auto& [key, entry] : l.entries)
    if (entry.first == failed->local_port)
      entry.second(*failed);
}

std::string alert_text(int desc) {
  switch (desc) {
    case SSL_AD_UNKNOWN_CA:
      return "unknown CA";
    case SSL_AD_CERTIFICATE_EXPIRED:
      return "certificate expired";
    case SSL_AD_BAD_CERTIFICATE:
      return "bad certificate (OpenSSL's alert for a certificate not yet "
             "valid, among others)";
    case SSL_AD_CERTIFICATE_REQUIRED:
      return "certificate required";
    default:
      return SSL_alert_desc_string_long(desc);
  }
}

std::string where(const record& x) {
  return x.remote_addr + ":" + std::to_string(x.remote_port);
}

} // namespace

void install() {
  static bool installed = [] {
    // The index is never used for data: only its callbacks matter.
    return CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nullptr, on_new_ssl,
                                   nullptr, on_free_ssl)
           >= 0;
  }();
  static_cast<void>(installed);
}

uint64_t last_seq() {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  return t.next_seq - 1;
}

std::optional<record> find_done(const std::string& addr, uint16_t port) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  for (auto i = t.records.rbegin(); i != t.records.rend(); ++i)
    if (i->done && i->remote_port == port && i->remote_addr == addr)
      return *i;
  return std::nullopt;
}

std::optional<record> find_failed_client(uint16_t port, uint64_t since) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  for (auto i = t.records.rbegin(); i != t.records.rend(); ++i)
    if (i->seq > since && !i->server && i->remote_port == port)
      return *i;
  return std::nullopt;
}

std::vector<uint64_t> unsettled_clients(uint16_t port, uint64_t since) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  std::vector<uint64_t> result;
  for (auto& x : t.records)
    if (x.seq > since && !x.server && x.remote_port == port && !x.done
        && !x.freed)
      result.push_back(x.seq);
  return result;
}

namespace {

/// Blocks until `pred` holds for each record in `seqs` (or it was dropped)
/// or until `deadline`.
template <class Pred>
bool await_all(const std::vector<uint64_t>& seqs,
               std::chrono::steady_clock::time_point deadline, Pred pred) {
  auto& t = table();
  std::unique_lock<std::mutex> guard{t.mtx};
  return t.settled.wait_until(guard, deadline, [&] {
    return std::all_of(seqs.begin(), seqs.end(), [&](uint64_t seq) {
      auto* x = t.find(seq);
      return x == nullptr || pred(*x);
    });
  });
}

} // namespace

bool await_settled(const std::vector<uint64_t>& seqs,
                   std::chrono::steady_clock::time_point deadline) {
  return await_all(seqs, deadline,
                   [](const record& x) { return x.done || x.freed; });
}

bool await_freed(const std::vector<uint64_t>& seqs,
                 std::chrono::steady_clock::time_point deadline) {
  return await_all(seqs, deadline, [](const record& x) { return x.freed; });
}

uint64_t listen(uint16_t port, std::function<void(const record&)> fn) {
  auto& l = listeners();
  std::lock_guard<std::mutex> guard{l.mtx};
  auto key = l.next_key++;
  l.entries.emplace(key, std::pair{port, std::move(fn)});
  return key;
}

void unlisten(uint64_t key) {
  auto& l = listeners();
  std::lock_guard<std::mutex> guard{l.mtx};
  l.entries.erase(key);
}

std::vector<std::string> names_of(X509* cert) {
  std::vector<std::string> result;
  auto* subject = X509_get_subject_name(cert);
  for (auto i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
       i >= 0; i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    auto* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    result.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                        static_cast<size_t>(ASN1_STRING_length(data)));
  }
  auto* alt = static_cast<GENERAL_NAMES*>(
    X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (alt != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(alt); ++i) {
      auto* name = sk_GENERAL_NAME_value(alt, i);
      if (name->type == GEN_DNS)
        result.emplace_back(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
          static_cast<size_t>(ASN1_STRING_length(name->d.dNSName)));
    }
    GENERAL_NAMES_free(alt);
  }
  // A name usually stands in both.
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::string describe_x509_error(int err) {
  std::string what = X509_verify_cert_error_string(err);
  switch (err) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "unknown CA (" + what + ")";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "expired (" + what + ")";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "not yet valid (" + what + ")";
    default:
      return what;
  }
}

std::string explain(const record& x, const std::string& own_problem) {
  auto peer = x.server ? "the peer at " + where(x)
                       : "the node at " + where(x);
  auto own = own_problem.empty()
               ? std::string{}
               : "; this node's certificate is " + own_problem;
  if (x.x509_error != 0)
    return "refused the certificate of " + peer + ": "
           + describe_x509_error(x.x509_error);
  if (x.alert_received >= 0)
    return peer + " refused this node's certificate (TLS alert: "
           + alert_text(x.alert_received) + ")" + own;
  if (!x.peer_spoke_tls)
    return x.server ? peer
                        + " does not speak TLS (a plain ferry or CAF node, or "
                          "no node at all): this node links over TLS only"
                    : peer
                        + " does not speak TLS (a plain node: its ferry.tls "
                          "options are not set): this node links over TLS "
                          "only";
  if (x.alert_sent >= 0)
    return "refused the TLS handshake with " + peer + " (TLS alert: "
           + alert_text(x.alert_sent) + ")" + own;
  if (x.done && !x.server)
    return peer
           + " closed the connection after the TLS handshake, before CAF's "
             "own: it refused this node's certificate or ended the "
             "connection, and no TLS alert saying why arrived (a reset can "
             "overtake it; that node's log has the reason)"
           + own;
  return "the TLS handshake with " + peer + " did not finish" + own;
}

} // namespace ferry::detail::tls_identity
