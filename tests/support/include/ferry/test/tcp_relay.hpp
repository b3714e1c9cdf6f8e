// A TCP relay on loopback for tests: a cable between two nodes that a test
// can cut. Each connection made to the relay's port is joined to a new
// connection to the target port, and bytes go both ways unchanged until
// `cut` closes every pair (both peers then see their connection end, as
// when a network drops it) or `freeze` stops passing them (the peers see
// silence on a connection still open, as when packets are dropped);
// `hold_next_answer` delays what the target first says on the next
// connection (a peer slow to answer a handshake). Not a transport: nodes
// speak ferry's wire through it exactly as they would directly. A socket
// call that fails is a test failure (GoogleTest's ADD_FAILURE).
//
// Thread-safety: one thread of its own moves the bytes; the public members
// may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace ferry::test {

class tcp_relay {
public:
  /// Listens on an ephemeral loopback port and relays to `target_port`.
  explicit tcp_relay(uint16_t target_port);

  tcp_relay(const tcp_relay&) = delete;
  tcp_relay& operator=(const tcp_relay&) = delete;

  ~tcp_relay();

  /// The port to connect to instead of the target's.
  uint16_t port() const { return port_; }

  /// Closes every connection relayed so far (frozen ones included);
  /// returns once they are closed. New connections are relayed as before.
  void cut();

  /// Stops passing the bytes of every connection relayed so far, leaving
  /// them open: their peers meet silence, as when a network drops packets
  /// without a word. New connections are relayed as before.
  void freeze();

  /// Holds the target's bytes on the next connection relayed for `delay`
  /// from its accept, passing the connecting peer's bytes meanwhile: the
  /// target seems slow to answer. Later connections are relayed as before.
  void hold_next_answer(std::chrono::milliseconds delay);

  /// Number of connections relayed so far.
  int connections() const { return connections_; }

private:
  using clock = std::chrono::steady_clock;

  /// One relayed connection: `in` accepted, `out` to the target; the
  /// target's bytes pass from `answers_from` on.
  struct pair {
    int in;
    int out;
    clock::time_point answers_from;
  };

  void poke();
  void close_pairs();
  void accept_one();
  void run();

  uint16_t target_port_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::array<int, 2> wake_{-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> cut_requested_{false};
  std::atomic<bool> freeze_requested_{false};
  std::atomic<int> connections_{0};
  /// Milliseconds to hold the next connection's answer for.
  std::atomic<int64_t> hold_next_{0};
  /// Relayed connections; the relay's thread alone touches them while it
  /// runs.
  std::vector<pair> pairs_;
  /// Frozen pairs: open, never read or written.
  std::vector<pair> frozen_;
  std::thread thread_;
};

} // namespace ferry::test
