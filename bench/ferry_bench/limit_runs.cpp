// The limit rows: what the machine allows without actors, measured in the
// same sets as the rows compared with them.
//
// - `socket` (tcp and netns sets): two processes and one blocking TCP
//   connection, TCP_NODELAY on both ends (byte_stream.hpp).
// - `tls-socket` (the tls rows, in the tcp sets): the same over TLS 1.3
//   with OpenSSL (tls_stream.hpp), certificates of the run's test PKI for
//   the names `tls-socket-driver` and `tls-socket-peer` (test_pki.hpp).
//   The peer checks the driver's certificate and the driver the peer's
//   name, as ferry's TLS links check each other.
//
//   Both send the messages of frame_protocol.hpp: the sender here runs the
//   same stream trial as the actor rows (same window, acknowledgement
//   batches and rounds) from the same kind of prebuilt buffer. The peer
//   (`ferry-bench --peer=socket|tls-socket`) listens on its address,
//   prints "port <N>", takes one connection and reads messages on one
//   thread; its stdin takes the peers' commands (`reset k`, `rss`), and
//   `reset` only runs between rounds, when nothing is in flight.
// - `memcpy` (ipc sets): one warm memcpy of the payload size per round
//   (`memcpy_us`, the same figure as the machine block's), reported as
//   copies per second; p50/p99 are the per-copy times.
//
// Groups and trials run on the driver's main thread only.
#include "bench_types.hpp"
#include "byte_stream.hpp"
#include "child.hpp"
#include "driver.hpp"
#include "frame_protocol.hpp"
#include "machine.hpp"
#include "stream_trial.hpp"
#include "test_pki.hpp"
#include "tls_stream.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace ferry::bench {

namespace {

/// The names in the tls-socket row's certificates.
const std::string tls_driver_name = "tls-socket-driver";
const std::string tls_peer_name = "tls-socket-peer";

/// Opens the stream to a peer listening on `port`.
using stream_connector
  = std::function<std::unique_ptr<byte_stream>(uint16_t port)>;

/// A socket row: the peer process and the stream to it.
class stream_group final : public group {
public:
  /// Starts the peer with `args` and opens the stream to it with `connect`.
  stream_group(std::string row, const std::vector<std::string>& args,
               const stream_connector& connect)
    : row_(std::move(row)) {
    peer_ = std::make_unique<child>(args);
    auto port = peer_->wait_for("port ", std::chrono::seconds{30});
    if (!port)
      throw std::runtime_error("the " + row_ + " peer did not start");
    stream_ = connect(static_cast<uint16_t>(std::stoi(*port)));
  }

  ~stream_group() override {
    stream_.reset();
    peer_.reset();
  }

  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    if (c.type != payload_type::bytes)
      throw std::runtime_error("the " + row_ + " row sends bytes only");
    // The bytes raw-caf sends (one copy in the process, not one per row).
    auto held = std::make_shared<const caf::message>(bytes_message(c.size,
                                                                   true));
    std::shared_ptr<const std::vector<char>> payload{
      held, &held->get_as<std::vector<char>>(0)};
    trial_hooks hooks;
    hooks.reset = [this](uint64_t ack_every) {
      return peer_->ask("reset " + std::to_string(ack_every), "ok")
        .has_value();
    };
    hooks.peak_rss = [this] {
      auto answer = peer_->ask("rss", "rss ");
      return answer ? std::stod(*answer) : -1.0;
    };
    return make_stream_trial(make_frame_channel(*stream_, std::move(payload)),
                             c.pat, p, std::move(hooks));
  }

  measurement handoff(const cell&, const run_params&) override {
    measurement m;
    m.error = "the " + row_ + " row has no hand-off";
    return m;
  }

private:
  std::string row_;
  std::unique_ptr<child> peer_;
  std::unique_ptr<byte_stream> stream_;
};

/// The peer's arguments: where it runs and listens.
std::vector<std::string> peer_args(const std::string& mode,
                                   const bench_env& env) {
  std::vector<std::string> args{"--peer=" + mode};
  args.insert(args.end(), env.peer_place.begin(), env.peer_place.end());
  args.push_back("--address=" + env.peer_address);
  return args;
}

std::unique_ptr<group> make_socket_group(const bench_env& env) {
  auto address = env.peer_address;
  return std::make_unique<stream_group>(
    socket_limit, peer_args("socket", env), [address](uint16_t port) {
      return make_tcp_stream(connect_tcp(address, port));
    });
}

std::unique_ptr<group> make_tls_socket_group(const bench_env& env) {
  if (env.pki_dir.empty())
    throw std::runtime_error("the tls-socket row needs the run's PKI "
                             "directory");
  make_certificates(env.pki_dir, {tls_driver_name, tls_peer_name});
  auto ctx = std::make_shared<tls_context>(
    tls_context::role::client, credentials_of(env.pki_dir, tls_driver_name));
  auto args = peer_args("tls-socket", env);
  auto files = credentials_of(env.pki_dir, tls_peer_name);
  args.insert(args.end(), {"--certificate=" + files.certificate,
                           "--key=" + files.key,
                           "--ca-file=" + files.ca_file});
  auto address = env.peer_address;
  return std::make_unique<stream_group>(
    tls_socket_limit, args, [ctx, address](uint16_t port) {
      int fd = connect_tcp(address, port);
      try {
        auto conn = ctx->handshake(fd, tls_peer_name);
        // Inside the set's progress line: "warm-up (tls-socket: TLSv1.3 ...)".
        std::cerr << " (tls-socket: " << conn.session << ")" << std::flush;
        return std::move(conn.stream);
      } catch (...) {
        ::close(fd);
        throw;
      }
    });
}

/// Rounds of one warm memcpy each (see the file comment).
class memcpy_trial final : public trial {
public:
  memcpy_trial(uint64_t size, const run_params& p) : size_(size), p_(p) {
    // nop
  }

  bool warm_up() override {
    static_cast<void>(memcpy_us(size_));
    return true;
  }

  int rounds() const override { return p_.repeats; }

  bool round() override {
    auto us = memcpy_us(size_);
    if (us <= 0) {
      m_.error = "memcpy took no measurable time";
      return false;
    }
    times_.push_back(us);
    rates_.push_back(1e6 / us);
    m_.messages += 1;
    m_.seconds += us / 1e6;
    return true;
  }

  measurement result() override {
    return summarize_rounds(m_, rates_, times_);
  }

private:
  uint64_t size_;
  run_params p_;
  std::vector<double> times_;
  std::vector<double> rates_;
  measurement m_;
};

class memcpy_group final : public group {
public:
  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    return std::make_unique<memcpy_trial>(c.size, p);
  }

  measurement handoff(const cell&, const run_params&) override {
    measurement m;
    m.error = "the memcpy row has no hand-off";
    return m;
  }
};

/// Makes a connection's stream from its socket; on failure throws and
/// leaves the socket to the caller.
using stream_opener = std::function<std::unique_ptr<byte_stream>(int fd)>;

/// A socket row's peer: listens on `address`, prints the port, serves one
/// connection opened with `open` on a thread of its own and the commands
/// on stdin until stdin closes.
int serve_stream_peer(const std::string& address, const stream_opener& open) {
  // A write to a connection the driver closed fails instead of ending the
  // process (OpenSSL writes with write(2)).
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<tcp_listener> listener;
  try {
    listener = std::make_unique<tcp_listener>(address);
  } catch (std::exception& e) {
    std::cerr << "ferry-bench peer: " << e.what() << '\n';
    return 1;
  }
  std::cout << "port " << listener->port() << std::endl;
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> ack_every{1};
  std::atomic<int> conn{-1};
  // Set by the reader, read after it joined.
  std::unique_ptr<byte_stream> stream;
  std::thread reader{[&] {
    int fd = listener->accept();
    if (fd < 0)
      return;
    conn = fd;
    try {
      stream = open(fd);
    } catch (std::exception& e) {
      std::cerr << "ferry-bench peer: " << e.what() << '\n';
      return;
    }
    serve_frames(*stream, count, ack_every);
  }};
  auto rc = serve_commands([&](uint64_t k) {
    count = 0;
    ack_every = std::max<uint64_t>(1, k);
    return true;
  });
  // stdin closed: end the reader (blocked in accept, a handshake or a read)
  // and leave.
  listener->shutdown();
  if (auto fd = conn.load(); fd >= 0)
    ::shutdown(fd, SHUT_RDWR);
  reader.join();
  if (stream)
    stream.reset(); // closes the socket
  else if (auto fd = conn.load(); fd >= 0)
    ::close(fd);
  return rc;
}

} // namespace

std::unique_ptr<group> make_limit_group(transport tr, const bench_env& env) {
  if (tr == transport::tcp || tr == transport::netns)
    return make_socket_group(env);
  if (tr == transport::tls)
    return make_tls_socket_group(env);
  if (tr == transport::ipc)
    return std::make_unique<memcpy_group>();
  throw std::runtime_error("no limit row for " + to_string(tr));
}

int socket_peer_main(const std::string& address) {
  return serve_stream_peer(address, [](int fd) { return make_tcp_stream(fd); });
}

int tls_socket_peer_main(int argc, char** argv, const std::string& address) {
  tls_credentials files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = arg.substr(arg.find('=') + 1);
    if (arg.rfind("--certificate=", 0) == 0)
      files.certificate = value;
    else if (arg.rfind("--key=", 0) == 0)
      files.key = value;
    else if (arg.rfind("--ca-file=", 0) == 0)
      files.ca_file = value;
    else {
      std::cerr << "ferry-bench peer: unknown tls-socket argument " << arg
                << '\n';
      return 2;
    }
  }
  if (files.certificate.empty() || files.key.empty() || files.ca_file.empty()) {
    std::cerr << "ferry-bench peer: the tls-socket peer needs "
                 "--certificate=, --key= and --ca-file=\n";
    return 2;
  }
  std::unique_ptr<tls_context> ctx;
  try {
    ctx = std::make_unique<tls_context>(tls_context::role::server, files);
  } catch (std::exception& e) {
    std::cerr << "ferry-bench peer: " << e.what() << '\n';
    return 2;
  }
  return serve_stream_peer(address, [&ctx](int fd) {
    return ctx->handshake(fd).stream;
  });
}

} // namespace ferry::bench
