// connection: one TCP connection of ferry's own, plain or TLS, on
// Boost.Asio.
//
// A connection belongs to one I/O thread (transport/io_threads.hpp), which
// runs everything Asio calls for it: the TLS handshake, reading, the timer,
// and writing what the socket did not take at once. It reads with its
// `frame_reader` and hands every frame to its `handler` on that thread,
// with no other hop: during the handshake the handler is the node's
// handshake (node/handshake.hpp), then the dispatcher of the link the
// connection carries (node/dispatch.hpp), which delivers into the target
// actor's mailbox from this thread.
//
// Sending (`send`, any thread, in the link's order): when nothing is queued,
// the calling thread writes the frame itself, with scatter-gather from the
// frame's pieces (a round trip pays no thread hop); what the socket does
// not take stays queued, with the frame's memory, and the I/O thread
// writes it once the socket is writable. A frame the stream took whole
// leaves the queue even when the stream still holds some of it (a TLS
// stream's record buffer): then only the stream's flush waits for the
// socket. Frames sent before the stream is ready (the TLS handshake) wait
// in the queue behind the preface. Nothing waits: a link's credit window
// bounds what can be queued. One mutex (`send_mtx_`) orders the writers and
// guards the queue; the reader never takes it.
//
// Timing (one Asio timer): until `linked`, the connection closes when the
// handshake does not end within its timeout; after, it sends a heartbeat
// when it sent nothing for `heartbeat_interval` and closes when it heard
// nothing for `connection_timeout`. A peer that connects and sends nothing
// costs a timer and a socket, no CPU.
//
// Ending: `close(true)` (the link goes down in order, or the node stops)
// writes what is queued, ends the sending side, reads until the peer closes
// its side (bounded by the linger), then closes; `close(false)` and
// failures close at once. The handler hears `on_closed` once, with the
// reason (none when this side closed it).
//
// Thread-safety: `send`, `close` and `fail` may be called from any thread;
// everything else runs on the connection's I/O thread.
#pragma once

#include "clock.hpp"
#include "thread_safety.hpp"
#include "transport/frame_reader.hpp"
#include "transport/stream.hpp"
#include "transport/transport.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ferry::detail::net {

/// The times a connection keeps.
struct connection_timing {
  /// Until `linked`: the handshake must end within this.
  std::chrono::milliseconds handshake_timeout{10000};
  /// After `linked`: a heartbeat when nothing was sent for this long.
  std::chrono::milliseconds heartbeat_interval{5000};
  /// After `linked`: closed when nothing arrived for this long.
  std::chrono::milliseconds connection_timeout{30000};
  /// `close(true)` waits at most this long for the peer's end.
  std::chrono::milliseconds linger{2000};
  /// The clock these times are measured on (the node's).
  const clock* time = &clock::steady();
};

/// How a connection's stream is made, once the socket is connected.
struct stream_maker {
  /// Makes the stream for socket `fd`: TLS (`tls`) or plain, as the
  /// accepting (`server`) or connecting side.
  std::function<caf::expected<std::unique_ptr<stream>>(int fd, bool tls,
                                                       bool server)>
    make;
  /// Explains why the TLS handshake of `s` failed (TLS streams only).
  std::function<std::string(stream& s, const std::string& peer)> explain;
  /// Whether to make a TLS stream: the connecting side decides at once; the
  /// accepting side of a TLS node looks at the first byte the peer sends
  /// (a TLS record or ferry's preface).
  bool tls = false;
  /// Accepting side: tell TLS from plain by the first byte.
  bool detect = false;
};

class connection final : public transport,
                         public std::enable_shared_from_this<connection> {
public:
  /// What a connection reports, on its I/O thread.
  class handler : public frame_sink {
  public:
    /// The stream is ready (the TLS handshake ended): send the first frames.
    virtual void on_open(connection& conn) = 0;

    /// The connection ended (called once); `why` is none when this side
    /// closed it.
    virtual void on_closed(connection& conn, const caf::error& why) = 0;
  };

  /// Makes a connection over the connected `sock`, on the side `server`.
  /// `token` is kept until the connection ends (its owner counts open
  /// connections with it).
  static std::shared_ptr<connection>
  make(boost::asio::ip::tcp::socket sock, bool server, stream_maker streams,
       connection_timing timing, std::shared_ptr<handler> first,
       std::shared_ptr<const void> token = nullptr);

  ~connection() override;

  /// Starts the connection (on its I/O thread): the TLS handshake, then
  /// `on_open`, then reading.
  void start();

  /// Passes what arrives from now on to `next` (I/O thread only: called
  /// by a handler inside one of its callbacks).
  void set_handler(std::shared_ptr<handler> next);

  /// The handshake ended with a link: heartbeats and silence from now on
  /// (`timing`'s handshake timeout no longer applies).
  void linked(std::chrono::milliseconds heartbeat_interval,
              std::chrono::milliseconds connection_timeout);

  void send(wire::out_frame&& frame) override;

  void close(bool drain) override;

  bool is_lane() const noexcept override { return false; }

  /// Closes at once and reports `why` to the handler (any thread).
  void fail(caf::error why) override;

  /// Returns the peer's address and port ("10.0.0.2:4242").
  const std::string& peer_address() const noexcept { return peer_; }

  /// Returns whether this side accepted the connection.
  bool server() const noexcept { return server_; }

  /// Returns whether the connection is a TLS connection (known once open).
  bool is_tls() const noexcept override { return tls_; }

  /// Returns the stream (null before it is made). I/O thread only.
  stream* get_stream() noexcept { return stream_.get(); }

private:
  connection(boost::asio::ip::tcp::socket sock, bool server,
             stream_maker streams, connection_timing timing,
             std::shared_ptr<handler> first, std::shared_ptr<const void> token);

  /// Looks at the first byte to tell TLS from plain (accepting TLS nodes).
  void detect();

  /// Makes the stream and runs the TLS handshake.
  void open(bool tls);
  void handshake();

  /// Reads what the socket has.
  void read_ready();

  /// Says why reading failed with `r`.
  std::string read_failure(const io_result& r) const;
  void await_readable();

  /// Writes what the queue holds (I/O thread, when the socket is
  /// writable).
  void write_ready();

  /// Writes queued frames as far as the socket takes them; returns what
  /// the stream needs to go on.
  io_result write_locked() FERRY_REQUIRES(send_mtx_);

  /// Asks the I/O thread to wait for writability.
  void arm_write_locked(io_result::status need) FERRY_REQUIRES(send_mtx_);

  /// Arms the timer for its next tick.
  void schedule_tick();
  void tick();

  /// Ends the sending side once the queue is empty (draining close).
  void finish_drain();

  /// Closes the socket and reports `why` (I/O thread).
  void end(caf::error why);

  struct queued {
    wire::out_frame frame;
    /// Bytes of the frame the stream took already.
    uint64_t taken = 0;
  };

  /// Released when the connection ends (its owner counts open ones).
  std::shared_ptr<const void> token_;
  boost::asio::ip::tcp::socket sock_;
  const bool server_;
  const stream_maker streams_;
  connection_timing timing_;
  std::string peer_;
  boost::asio::steady_timer timer_;
  std::unique_ptr<stream> stream_;
  std::shared_ptr<handler> handler_;
  frame_reader reader_;
  bool tls_ = false;
  bool linked_ = false;
  bool ended_ = false;
  bool draining_ = false;
  clock::time_point deadline_;
  std::atomic<clock::duration::rep> last_sent_{0};
  clock::duration::rep last_received_ = 0;

  mutex send_mtx_;
  /// The stream is ready (senders read it).
  bool open_ FERRY_GUARDED_BY(send_mtx_) = false;
  std::deque<queued> queue_ FERRY_GUARDED_BY(send_mtx_);
  std::vector<piece> pieces_ FERRY_GUARDED_BY(send_mtx_);
  bool write_armed_ FERRY_GUARDED_BY(send_mtx_) = false;
  /// Whether `send` takes frames (not after `close`).
  bool accepting_ FERRY_GUARDED_BY(send_mtx_) = true;
  /// Whether nothing more is written (after a failure, a close without
  /// draining, or once a draining close wrote everything).
  bool closed_ FERRY_GUARDED_BY(send_mtx_) = false;
};

} // namespace ferry::detail::net
