// connection: a TCP connection's life on its I/O thread (see
// transport/connection.hpp).
#include "transport/connection.hpp"

#include "ferry/errc.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>

#include <sys/socket.h>

namespace ferry::detail::net {

namespace asio = boost::asio;

namespace {

/// Bytes one turn of the reader takes before it lets the thread's other
/// connections run.
constexpr size_t read_turn = size_t{4} << 20;

/// Pieces and bytes one write call takes at most.
constexpr size_t write_pieces = 1024;
constexpr uint64_t write_bytes = uint64_t{16} << 20;

std::string endpoint_text(const asio::ip::tcp::socket& sock) {
  boost::system::error_code ec;
  auto ep = sock.remote_endpoint(ec);
  if (ec)
    return "an unknown address";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

std::chrono::milliseconds to_ms(clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

} // namespace

// -- making and starting ------------------------------------------------------

connection::connection(asio::ip::tcp::socket sock, bool server,
                       stream_maker streams, connection_timing timing,
                       std::shared_ptr<handler> first,
                       std::shared_ptr<const void> token)
  : token_(std::move(token)),
    sock_(std::move(sock)),
    server_(server),
    streams_(std::move(streams)),
    timing_(timing),
    peer_(endpoint_text(sock_)),
    timer_(sock_.get_executor()),
    handler_(std::move(first)) {
  boost::system::error_code ec;
  sock_.non_blocking(true, ec);
  sock_.set_option(asio::ip::tcp::no_delay{true}, ec);
}

connection::~connection() = default;

std::shared_ptr<connection>
connection::make(asio::ip::tcp::socket sock, bool server, stream_maker streams,
                 connection_timing timing, std::shared_ptr<handler> first,
                 std::shared_ptr<const void> token) {
  return std::shared_ptr<connection>{
    new connection(std::move(sock), server, std::move(streams), timing,
                   std::move(first), std::move(token))};
}

void connection::start() {
  asio::post(sock_.get_executor(), [self = shared_from_this()] {
    auto now = self->timing_.time->now();
    self->deadline_ = now + self->timing_.handshake_timeout;
    self->last_received_ = now.time_since_epoch().count();
    self->schedule_tick();
    if (self->streams_.detect)
      self->detect();
    else
      self->open(self->streams_.tls);
  });
}

void connection::detect() {
  sock_.async_wait(
    asio::socket_base::wait_read,
    [self = shared_from_this()](boost::system::error_code ec) {
      if (self->ended_ || ec == asio::error::operation_aborted)
        return;
      if (ec) {
        self->end(caf::make_error(errc::handshake_failed,
                                  "the connection from " + self->peer_ +
                                    " failed: " + ec.message()));
        return;
      }
      std::byte first{};
      auto n =
        ::recv(self->sock_.native_handle(), &first, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        self->detect();
        return;
      }
      if (n <= 0) {
        self->end(caf::make_error(errc::handshake_failed,
                                  "the peer at " + self->peer_ +
                                    " closed the connection before it said a "
                                    "word"));
        return;
      }
      // A TLS record of the handshake begins with 0x16.
      self->open(first == std::byte{0x16});
    });
}

void connection::open(bool tls) {
  tls_ = tls;
  auto made = streams_.make(sock_.native_handle(), tls, server_);
  if (!made) {
    end(std::move(made.error()));
    return;
  }
  stream_ = std::move(*made);
  handshake();
}

void connection::handshake() {
  if (ended_)
    return;
  auto r = stream_->handshake();
  using st = io_result::status;
  switch (r.state) {
  case st::ok: {
    {
      lock_guard guard{send_mtx_};
      open_ = true;
      // Before anything else, frames sent while the stream was not ready
      // included: the preface, then the handler's first frames.
      queue_.push_front(queued{wire::out_frame::raw(wire::preface), 0});
    }
    handler_->on_open(*this);
    // What on_open sent (and anything sent meanwhile) goes out now.
    write_ready();
    read_ready();
    return;
  }
  case st::want_read:
  case st::want_write:
    sock_.async_wait(r.state == st::want_read ? asio::socket_base::wait_read
                                              : asio::socket_base::wait_write,
                     [self = shared_from_this()](boost::system::error_code ec) {
                       if (ec == asio::error::operation_aborted)
                         return;
                       self->handshake();
                     });
    return;
  default: {
    auto why =
      tls_ && streams_.explain ? streams_.explain(*stream_, peer_) : r.error;
    if (why.empty())
      why = "the peer at " + peer_ + " closed the connection";
    end(caf::make_error(errc::handshake_failed, why));
    return;
  }
  }
}

void connection::set_handler(std::shared_ptr<handler> next) {
  handler_ = std::move(next);
}

void connection::linked(std::chrono::milliseconds heartbeat_interval,
                        std::chrono::milliseconds connection_timeout) {
  asio::post(sock_.get_executor(), [self = shared_from_this(),
                                    heartbeat_interval, connection_timeout] {
    self->timing_.heartbeat_interval = heartbeat_interval;
    self->timing_.connection_timeout = connection_timeout;
    self->linked_ = true;
    self->timer_.cancel();
    self->schedule_tick();
  });
}

// -- reading ------------------------------------------------------------------

void connection::await_readable() {
  sock_.async_wait(asio::socket_base::wait_read,
                   [self = shared_from_this()](boost::system::error_code ec) {
                     if (ec == asio::error::operation_aborted)
                       return;
                     self->read_ready();
                   });
}

std::string connection::read_failure(const io_result& r) const {
  if (tls_)
    return r.error;
  // A process that ends with bytes unread in its socket resets it instead
  // of closing it; for the reader that is the peer gone as well.
  if (r.sys_error == ECONNRESET)
    return "the peer at " + peer_ +
           " reset the connection (its process ended, or it closed the "
           "connection with bytes unread)";
  return "the connection to " + peer_ + " failed: " + r.error;
}

void connection::read_ready() {
  using st = io_result::status;
  size_t budget = read_turn;
  while (!ended_) {
    auto r = stream_->read(reader_.buffer());
    switch (r.state) {
    case st::ok: {
      last_received_ = timing_.time->now().time_since_epoch().count();
      // Held here: a handler may hand the connection to another one while
      // it runs (the handshake, once the link is made).
      auto h = handler_;
      if (auto err = reader_.consume(r.bytes, *h)) {
        end(std::move(err));
        return;
      }
      if (r.bytes >= budget) {
        // Others on this thread get their turn; this one goes on after.
        asio::post(sock_.get_executor(),
                   [self = shared_from_this()] { self->read_ready(); });
        return;
      }
      budget -= r.bytes;
      continue;
    }
    case st::want_read:
      await_readable();
      return;
    case st::want_write:
      sock_.async_wait(
        asio::socket_base::wait_write,
        [self = shared_from_this()](boost::system::error_code ec) {
          if (ec == asio::error::operation_aborted)
            return;
          self->read_ready();
        });
      return;
    case st::closed:
      end(draining_
            ? caf::error{}
            : caf::make_error(errc::link_down, "the peer at " + peer_ +
                                                 " closed the connection"));
      return;
    case st::failed:
      end(caf::make_error(errc::link_down, read_failure(r)));
      return;
    }
  }
}

// -- writing ------------------------------------------------------------------

void connection::send(wire::out_frame&& frame) {
  last_sent_.store(timing_.time->now().time_since_epoch().count(),
                   std::memory_order_relaxed);
  unique_lock guard{send_mtx_};
  if (!accepting_)
    return;
  if (!queue_.empty() || write_armed_ || !open_) {
    queue_.push_back(queued{std::move(frame), 0});
    return;
  }
  // Nothing queued: this thread writes the frame itself.
  pieces_.clear();
  frame.pieces(pieces_);
  auto r = stream_->write(pieces_);
  if (r.ok())
    return;
  if (r.state == io_result::status::failed) {
    closed_ = true;
    accepting_ = false;
    guard.unlock();
    fail(caf::make_error(errc::link_down,
                         "writing to " + peer_ + " failed: " + r.error));
    return;
  }
  // A stream with a buffer of its own (TLS) may have taken the whole frame
  // and still hold some of it: then only its flush waits for the socket.
  if (r.bytes < frame.size())
    queue_.push_back(queued{std::move(frame), r.bytes});
  arm_write_locked(r.state);
}

io_result connection::write_locked() {
  for (;;) {
    pieces_.clear();
    uint64_t gathered = 0;
    for (auto& x : queue_) {
      auto first = pieces_.size();
      x.frame.pieces(pieces_);
      // Skip what the stream took of this frame already.
      auto skip = x.taken;
      auto i = first;
      while (skip > 0 && i < pieces_.size()) {
        auto n = std::min<uint64_t>(skip, pieces_[i].size());
        pieces_[i] = pieces_[i].subspan(static_cast<size_t>(n));
        skip -= n;
        if (pieces_[i].empty())
          ++i;
      }
      pieces_.erase(pieces_.begin() + static_cast<ptrdiff_t>(first),
                    pieces_.begin() + static_cast<ptrdiff_t>(i));
      gathered += x.frame.size() - x.taken;
      if (pieces_.size() >= write_pieces || gathered >= write_bytes)
        break;
    }
    auto r = stream_->write(pieces_);
    // The stream took r.bytes of the queue's bytes, in order: the frames it
    // took whole leave the queue (the stream may still be flushing them).
    auto taken = static_cast<uint64_t>(r.bytes);
    while (!queue_.empty()) {
      auto& front = queue_.front();
      auto rest = front.frame.size() - front.taken;
      if (taken < rest) {
        front.taken += taken;
        break;
      }
      taken -= rest;
      queue_.pop_front();
    }
    if (!r.ok() || queue_.empty())
      return r;
  }
}

void connection::arm_write_locked(io_result::status need) {
  write_armed_ = true;
  asio::post(sock_.get_executor(), [self = shared_from_this(), need] {
    if (self->ended_)
      return;
    self->sock_.async_wait(need == io_result::status::want_read
                             ? asio::socket_base::wait_read
                             : asio::socket_base::wait_write,
                           [self](boost::system::error_code ec) {
                             if (ec == asio::error::operation_aborted)
                               return;
                             self->write_ready();
                           });
  });
}

void connection::write_ready() {
  unique_lock guard{send_mtx_};
  write_armed_ = false;
  if (closed_ || ended_ || !open_)
    return;
  auto r = write_locked();
  if (r.state == io_result::status::failed) {
    closed_ = true;
    guard.unlock();
    end(caf::make_error(errc::link_down,
                        "writing to " + peer_ + " failed: " + r.error));
    return;
  }
  if (!r.ok()) {
    arm_write_locked(r.state);
    return;
  }
  if (draining_ && queue_.empty()) {
    guard.unlock();
    finish_drain();
  }
}

// -- timing -------------------------------------------------------------------

void connection::schedule_tick() {
  using namespace std::chrono;
  milliseconds every;
  if (linked_)
    every = std::clamp(timing_.heartbeat_interval / 2, milliseconds{10},
                       milliseconds{1000});
  else
    every = std::clamp(to_ms(deadline_ - timing_.time->now()) + milliseconds{1},
                       milliseconds{1}, milliseconds{1000});
  timer_.expires_after(timing_.time->real_wait(every));
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted)
      return;
    self->tick();
  });
}

void connection::tick() {
  if (ended_)
    return;
  auto now = timing_.time->now();
  if (draining_ && now >= deadline_) {
    end(caf::none);
    return;
  }
  if (!linked_ && !draining_) {
    if (now >= deadline_) {
      end(caf::make_error(
        errc::handshake_failed,
        "no handshake with the peer at " + peer_ + " within " +
          std::to_string(timing_.handshake_timeout.count()) +
          " ms (ferry.transport.handshake-timeout): is it a ferry node, "
          "and alive?"));
      return;
    }
  } else if (linked_ && !draining_) {
    auto heard = clock::time_point{clock::duration{last_received_}};
    if (now - heard >= timing_.connection_timeout) {
      end(caf::make_error(
        errc::link_down,
        "heard nothing from " + peer_ + " for " +
          std::to_string(to_ms(now - heard).count()) +
          " ms (connection-timeout is " +
          std::to_string(timing_.connection_timeout.count()) +
          " ms): the peer's host or process stopped answering"));
      return;
    }
    auto said = clock::time_point{
      clock::duration{last_sent_.load(std::memory_order_relaxed)}};
    if (now - said >= timing_.heartbeat_interval) {
      wire::out_frame beat{wire::frame_type::heartbeat};
      beat.finish();
      send(std::move(beat));
    }
  }
  schedule_tick();
}

// -- ending -------------------------------------------------------------------

void connection::close(bool drain) {
  {
    lock_guard guard{send_mtx_};
    if (!accepting_)
      return;
    // Frames sent from now on are dropped; those queued still go (drain).
    accepting_ = false;
    closed_ = !drain;
  }
  asio::post(sock_.get_executor(), [self = shared_from_this(), drain] {
    if (self->ended_ || self->draining_)
      return;
    auto ready = false;
    {
      lock_guard guard{self->send_mtx_};
      ready = self->open_;
    }
    if (!drain || !ready) {
      self->end(caf::none);
      return;
    }
    self->draining_ = true;
    self->deadline_ = self->timing_.time->now() + self->timing_.linger;
    self->write_ready();
  });
}

void connection::finish_drain() {
  {
    lock_guard guard{send_mtx_};
    closed_ = true;
  }
  stream_->shutdown();
  // The peer closes its side once it read everything: read until then.
}

void connection::fail(caf::error why) {
  asio::post(sock_.get_executor(),
             [self = shared_from_this(), why = std::move(why)]() mutable {
               self->end(std::move(why));
             });
}

void connection::end(caf::error why) {
  if (ended_)
    return;
  ended_ = true;
  {
    lock_guard guard{send_mtx_};
    accepting_ = false;
    closed_ = true;
    queue_.clear();
  }
  timer_.cancel();
  boost::system::error_code ec;
  sock_.shutdown(asio::socket_base::shutdown_both, ec);
  sock_.close(ec);
  auto h = std::move(handler_);
  if (h)
    h->on_closed(*this, why);
  token_.reset();
}

} // namespace ferry::detail::net
