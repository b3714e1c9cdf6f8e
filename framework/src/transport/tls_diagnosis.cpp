// tls_diagnosis: the sentences of a failed TLS connection and the
// certificate helpers (see transport/tls_diagnosis.hpp).
#include "transport/tls_diagnosis.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace ferry::detail::net {

namespace {

/// Whether the alert `desc` refuses a certificate (rather than the
/// handshake's other parts or the connection).
bool certificate_alert(int desc) {
  switch (desc) {
  case SSL_AD_BAD_CERTIFICATE:
  case SSL_AD_UNSUPPORTED_CERTIFICATE:
  case SSL_AD_CERTIFICATE_REVOKED:
  case SSL_AD_CERTIFICATE_EXPIRED:
  case SSL_AD_CERTIFICATE_UNKNOWN:
  case SSL_AD_UNKNOWN_CA:
  case SSL_AD_CERTIFICATE_REQUIRED:
    return true;
  default:
    return false;
  }
}

std::string append_detail(const std::string& detail) {
  return detail.empty() ? std::string{} : "; " + detail;
}

} // namespace

std::string peer_of(const tls_diagnosis& x) {
  return (x.server ? "the peer at " : "the node at ") + x.peer_addr;
}

std::string explain(const tls_diagnosis& x, const std::string& own_problem,
                    const std::string& detail) {
  auto peer = peer_of(x);
  auto own = own_problem.empty()
               ? std::string{}
               : "; this node's certificate is " + own_problem;
  if (x.x509_error != 0)
    return "refused the certificate of " + peer + ": " +
           describe_x509_error(x.x509_error);
  if (x.alert_received >= 0) {
    auto alert = "(TLS alert: " + alert_text(x.alert_received) + ")";
    if (certificate_alert(x.alert_received))
      return peer + " refused this node's certificate " + alert + own;
    if (!x.handshake_done)
      return peer + " refused the TLS handshake " + alert + own;
    return peer + " ended the TLS connection " + alert;
  }
  if (!x.peer_spoke_tls)
    return x.server
             ? peer + " does not speak TLS (a plain ferry or CAF node, or "
                      "no node at all): this node links over TLS only"
             : peer + " does not speak TLS (a plain node: its ferry.tls "
                      "options are not set): this node links over TLS "
                      "only";
  if (x.cut_short) {
    if (!x.handshake_done)
      return peer +
             " closed the connection during the TLS handshake, "
             "without a TLS alert saying why" +
             own;
    return peer + " closed the TLS connection without a close_notify (it "
                  "stopped, or the connection was cut)";
  }
  if (x.alert_sent >= 0) {
    auto alert =
      "(TLS alert: " + alert_text(x.alert_sent) + append_detail(detail) + ")";
    if (!x.handshake_done)
      return "refused the TLS handshake with " + peer + " " + alert + own;
    return "ended the TLS connection with " + peer + " " + alert;
  }
  auto why = detail.empty() ? std::string{} : ": " + detail;
  if (x.handshake_done)
    return "the TLS connection with " + peer + " failed" + why;
  return "the TLS handshake with " + peer + " did not finish" + why + own;
}

std::vector<std::string> names_of(X509* cert) {
  std::vector<std::string> result;
  if (cert == nullptr)
    return result;
  auto* subject = X509_get_subject_name(cert);
  for (auto i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    auto* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    result.emplace_back(
      reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
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

std::string validity_problem(X509* cert) {
  if (cert == nullptr)
    return {};
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0)
    return "not yet valid";
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0)
    return "expired";
  return {};
}

std::string name_mismatch(const std::vector<std::string>& names,
                          const std::string& claimed) {
  if (std::find(names.begin(), names.end(), claimed) != names.end())
    return {};
  std::string listed;
  for (auto& x : names)
    listed += (listed.empty() ? "'" : " or '") + x + "'";
  return "name mismatch: the peer presents a certificate for " +
         (listed.empty() ? std::string{"no name"} : listed) +
         " but calls itself '" + claimed + "'";
}

std::string take_openssl_error() {
  auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return {};
  // "PEM routines: no start line" reads better than the packed
  // "error:0480006C:PEM routines::no start line".
  const char* lib = ERR_lib_error_string(code);
  const char* reason = ERR_reason_error_string(code);
  if (lib != nullptr && reason != nullptr)
    return std::string{lib} + ": " + reason;
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

} // namespace ferry::detail::net
