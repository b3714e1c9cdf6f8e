// tls_stream: driving one SSL over a non-blocking socket (see
// transport/tls_stream.hpp).
//
// OpenSSL keeps a per-thread error queue: it is emptied after every failure
// (else it leaks into the next connection this thread serves) and checked
// before every call on the SSL (else SSL_get_error may blame this
// connection for leftovers of other code on the thread). The check peeks:
// clearing an empty queue walks all of its slots, a sixth of what TLS adds
// to a small round trip (measured with bench/framework/round_trip_bench).
#include "transport/tls_stream.hpp"

#include "ferry/errc.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "transport/tls_bio.hpp"

namespace ferry::detail::net {

namespace {

/// Returns the peer of socket `fd` as "addr:port".
std::string remote_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return "an unknown address";
  char text[INET6_ADDRSTRLEN] = {};
  std::string result;
  if (addr.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    result.append(text).append(":");
    result.append(std::to_string(ntohs(v4->sin_port)));
  } else if (addr.ss_family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    result.append("[").append(text).append("]:");
    result.append(std::to_string(ntohs(v6->sin6_port)));
  } else {
    result = "a local socket";
  }
  return result;
}

/// The SSL ex_data slot that points to the stream's diagnosis (for the
/// verify callback, which gets no argument of its own).
int diagnosis_index() {
  static int index =
    SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

/// Records the first certificate error; OpenSSL's verdict stands.
int on_verify(int ok, X509_STORE_CTX* store) {
  if (ok != 0)
    return ok;
  auto* ssl = static_cast<SSL*>(
    X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (ssl == nullptr)
    return ok;
  auto* diag =
    static_cast<tls_diagnosis*>(SSL_get_ex_data(ssl, diagnosis_index()));
  if (diag != nullptr && diag->x509_error == 0)
    diag->x509_error = X509_STORE_CTX_get_error(store);
  return ok;
}

/// Records whether the peer speaks TLS and the alerts either side sends.
void on_message(int write_p, int, int content_type, const void* buf, size_t len,
                SSL*, void* arg) {
  auto* diag = static_cast<tls_diagnosis*>(arg);
  if (content_type != SSL3_RT_HANDSHAKE && content_type != SSL3_RT_ALERT)
    return;
  if (write_p == 0)
    diag->peer_spoke_tls = true;
  if (content_type != SSL3_RT_ALERT || len < 2)
    return;
  int desc = static_cast<const unsigned char*>(buf)[1];
  if (desc == SSL_AD_CLOSE_NOTIFY)
    return;
  auto& slot = write_p != 0 ? diag->alert_sent : diag->alert_received;
  if (slot < 0)
    slot = desc;
}

/// Empties this thread's OpenSSL error queue before a call on an SSL.
void clear_errors() {
  if (ERR_peek_error() != 0)
    ERR_clear_error();
}

io_result with_state(io_result::status state) {
  io_result result;
  result.state = state;
  return result;
}

} // namespace

tls_stream::tls_stream(int fd, bool server) : fd_(fd) {
  diag_.server = server;
  diag_.peer_addr = remote_address(fd);
}

tls_stream::~tls_stream() {
  SSL_free(ssl_);
}

caf::expected<std::unique_ptr<tls_stream>>
tls_stream::make(SSL_CTX* ctx, int fd, bool server) {
  std::unique_ptr<tls_stream> result{new tls_stream(fd, server)};
  auto cannot = [&] {
    return caf::make_error(errc::handshake_failed,
                           "OpenSSL cannot make a TLS session for the "
                           "connection with " +
                             result->peer_addr() + ": " + take_openssl_error() +
                             " (out of memory?)");
  };
  clear_errors();
  result->ssl_ = SSL_new(ctx);
  if (result->ssl_ == nullptr || diagnosis_index() < 0)
    return cannot();
  auto* ssl = result->ssl_;
  if (!attach_socket(ssl, fd))
    return cannot();
  if (server)
    SSL_set_accept_state(ssl);
  else
    SSL_set_connect_state(ssl);
  SSL_set_ex_data(ssl, diagnosis_index(), &result->diag_);
  SSL_set_verify(ssl, SSL_get_verify_mode(ssl), on_verify);
  SSL_set_msg_callback(ssl, on_message);
  SSL_set_msg_callback_arg(ssl, &result->diag_);
  result->staging_ = std::make_unique<std::byte[]>(record_size);
  return result;
}

// -- handshake ----------------------------------------------------------------

io_result tls_stream::handshake() {
  lock_guard guard{mtx_};
  return drive_handshake();
}

io_result tls_stream::drive_handshake() {
  if (!failure_.empty())
    return fail(failure_);
  if (diag_.handshake_done)
    return {};
  clear_errors();
  auto ret = SSL_do_handshake(ssl_);
  if (ret != 1)
    return outcome(errno, "exchanging handshake messages");
  diag_.handshake_done = true;
  auto* cert = SSL_get0_peer_certificate(ssl_);
  peer_names_ = names_of(cert);
  verify_result_ = cert != nullptr ? SSL_get_verify_result(ssl_) : -1;
  return {};
}

// -- reading ------------------------------------------------------------------

io_result tls_stream::read(std::span<std::byte> out) {
  io_result result;
  if (drained_) {
    drained_ = false;
    return with_state(io_result::status::want_read);
  }
  // Whether this call's last socket read found it empty.
  auto socket_empty = false;
  static_cast<void>(take_socket_read());
  while (result.bytes < out.size()) {
    // The lock is taken per record, so a writer waits one record at most.
    lock_guard guard{mtx_};
    io_result step;
    if (read_closed_) {
      step = with_state(io_result::status::closed);
    } else if (step = drive_handshake(); step.ok()) {
      clear_errors();
      size_t n = 0;
      if (SSL_read_ex(ssl_, out.data() + result.bytes,
                      out.size() - result.bytes, &n) == 1) {
        result.bytes += n;
        // Nothing left in OpenSSL and the socket found empty: the next
        // SSL_read would only hear so from the socket (stream.hpp).
        if (auto seen = take_socket_read(); seen != socket_read::none)
          socket_empty = seen == socket_read::drained;
        if (socket_empty && SSL_has_pending(ssl_) == 0) {
          drained_ = true;
          return result;
        }
        continue;
      }
      step = outcome(errno, "reading the socket");
      if (step.state == io_result::status::closed)
        read_closed_ = true;
    }
    // What was read comes first; the end or the failure (both sticky)
    // follows at the next call, and a socket found empty says so then
    // (stream.hpp).
    if (result.bytes > 0) {
      drained_ = step.state == io_result::status::want_read;
      return result;
    }
    return step;
  }
  return result;
}

// -- writing ------------------------------------------------------------------

io_result tls_stream::write_to_ssl(const std::byte* data, size_t size) {
  lock_guard guard{mtx_};
  if (auto step = drive_handshake(); !step.ok())
    return step;
  clear_errors();
  size_t n = 0;
  if (SSL_write_ex(ssl_, data, size, &n) == 1)
    return {};
  return outcome(errno, "writing the socket");
}

io_result tls_stream::flush_staging() {
  auto step = write_to_ssl(staging_.get(), staged_);
  if (step.ok()) {
    staged_ = 0;
    unfinished_ = unfinished::none;
  } else if (step.state == io_result::status::want_read ||
             step.state == io_result::status::want_write) {
    unfinished_ = unfinished::staging;
  }
  return step;
}

io_result tls_stream::write(std::span<const piece> pieces) {
  io_result result;
  auto stop = [&result](io_result step) {
    step.bytes = result.bytes;
    return step;
  };
  auto broken_contract = [&] {
    lock_guard guard{mtx_};
    return stop(
      fail("TLS stream misused: write was not given the same bytes again after "
           "a write OpenSSL could not finish (pass the pieces not taken, from "
           "the same place; see transport/stream.hpp)"));
  };
  if (unfinished_ == unfinished::staging) {
    if (auto step = flush_staging(); !step.ok())
      return stop(step);
  }
  for (auto& x : pieces) {
    size_t offset = 0;
    while (offset < x.size()) {
      auto rest = x.size() - offset;
      if (staged_ > 0 || rest < record_size) {
        if (unfinished_ == unfinished::piece)
          return broken_contract();
        auto n = std::min(record_size - staged_, rest);
        std::memcpy(staging_.get() + staged_, x.data() + offset, n);
        staged_ += n;
        offset += n;
        result.bytes += n;
        if (staged_ == record_size) {
          if (auto step = flush_staging(); !step.ok())
            return stop(step);
        }
        continue;
      }
      // The staging buffer is empty here, so a retry (which finds it empty
      // again) cuts the same slice.
      auto n = std::min(rest, max_slice);
      if (unfinished_ == unfinished::piece && n != unfinished_size_)
        return broken_contract();
      auto step = write_to_ssl(x.data() + offset, n);
      if (!step.ok()) {
        if (step.state == io_result::status::want_read ||
            step.state == io_result::status::want_write) {
          unfinished_ = unfinished::piece;
          unfinished_size_ = n;
        }
        return stop(step);
      }
      unfinished_ = unfinished::none;
      offset += n;
      result.bytes += n;
    }
  }
  if (unfinished_ == unfinished::piece)
    return broken_contract();
  if (staged_ > 0) {
    if (auto step = flush_staging(); !step.ok())
      return stop(step);
  }
  return stop(flush_socket());
}

io_result tls_stream::flush_socket() {
  lock_guard guard{mtx_};
  if (!failure_.empty())
    return fail(failure_);
  auto* bio = SSL_get_wbio(ssl_);
  clear_errors();
  if (BIO_flush(bio) == 1)
    return {};
  if (BIO_should_retry(bio))
    return with_state(io_result::status::want_write);
  auto err = errno;
  return fail(
    net::explain(diag_, validity_problem(SSL_get_certificate(ssl_)),
                 std::string{"writing the socket: "} + std::strerror(err)));
}

// -- the end ------------------------------------------------------------------

void tls_stream::shutdown() noexcept {
  lock_guard guard{mtx_};
  auto sent = false;
  if (diag_.handshake_done && failure_.empty()) {
    clear_errors();
    // SSL_shutdown: 0 when close_notify is written, 1 when the peer's
    // arrived too, < 0 when a write is unfinished. The flush then takes it
    // to the socket, unless the socket is full: the alert is given up on.
    sent = SSL_shutdown(ssl_) >= 0 && BIO_flush(SSL_get_wbio(ssl_)) == 1;
    ERR_clear_error();
  }
  // A FIN after a partly sent record would read as a truncated record.
  if (sent || !diag_.handshake_done || !failure_.empty())
    ::shutdown(fd_, SHUT_WR);
}

// -- what the connection showed ----------------------------------------------

bool tls_stream::handshake_done() const {
  lock_guard guard{mtx_};
  return diag_.handshake_done;
}

std::vector<std::string> tls_stream::peer_names() const {
  lock_guard guard{mtx_};
  return peer_names_;
}

long tls_stream::verify_result() const {
  lock_guard guard{mtx_};
  return verify_result_;
}

std::string tls_stream::check_name(const std::string& claimed) const {
  lock_guard guard{mtx_};
  if (!diag_.handshake_done)
    return "the TLS handshake with " + peer_of(diag_) +
           " has not finished: its certificate is not known yet";
  return name_mismatch(peer_names_, claimed);
}

std::string tls_stream::explain() const {
  lock_guard guard{mtx_};
  return failure_;
}

std::string tls_stream::cipher() const {
  lock_guard guard{mtx_};
  if (!diag_.handshake_done)
    return {};
  return std::string{SSL_get_version(ssl_)} + " " +
         SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_));
}

// -- failures -----------------------------------------------------------------

io_result tls_stream::outcome(int err, const char* doing) {
  switch (SSL_get_error(ssl_, 0)) {
  case SSL_ERROR_WANT_READ:
    return with_state(io_result::status::want_read);
  case SSL_ERROR_WANT_WRITE:
    return with_state(io_result::status::want_write);
  case SSL_ERROR_ZERO_RETURN:
    ERR_clear_error();
    return with_state(io_result::status::closed);
  case SSL_ERROR_SYSCALL: {
    // An EOF, or the socket's error (errno); OpenSSL 3 reports an EOF
    // without close_notify as SSL_ERROR_SSL, but a BIO may still end so.
    auto detail = take_openssl_error();
    if (err == 0 && detail.empty())
      diag_.cut_short = true;
    else if (detail.empty())
      detail = std::string{doing} + ": " + std::strerror(err);
    return fail(
      net::explain(diag_, validity_problem(SSL_get_certificate(ssl_)), detail));
  }
  case SSL_ERROR_SSL: {
    auto code = ERR_peek_error();
    if (ERR_GET_LIB(code) == ERR_LIB_SSL &&
        ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
      diag_.cut_short = true;
    auto detail = take_openssl_error();
    return fail(
      net::explain(diag_, validity_problem(SSL_get_certificate(ssl_)), detail));
  }
  default:
    return fail("OpenSSL stopped the TLS connection with " + peer_of(diag_) +
                " in an unexpected state: " + take_openssl_error());
  }
}

io_result tls_stream::fail(std::string sentence) {
  ERR_clear_error();
  if (failure_.empty())
    failure_ = std::move(sentence);
  io_result result;
  result.state = io_result::status::failed;
  result.error = failure_;
  return result;
}

} // namespace ferry::detail::net
