// The sender and receiver of the socket limit rows (see frame_protocol.hpp).
#include "frame_protocol.hpp"

#include "driver.hpp"

#include <cstring>

namespace ferry::bench {

namespace {

/// The header of every message.
struct frame_header {
  uint64_t size = 0;
  /// 0: one-way, 1: request.
  uint64_t kind = 0;
};

/// The sending end of a limit row.
class frame_channel final : public channel {
public:
  frame_channel(byte_stream& out,
                std::shared_ptr<const std::vector<char>> payload)
    : out_(out), payload_(std::move(payload)) {
    gathered_.reserve(gather_bytes);
  }

  void load() override {
    // The payload is prebuilt, as the actor rows' caf::message is.
  }

  void unload() override {
    // nop
  }

  bool send() override {
    frame_header h{payload_->size(), 0};
    if (sizeof(h) + payload_->size() > gather_bytes)
      return flush() && write_frame(0);
    auto* pos = reinterpret_cast<const char*>(&h);
    gathered_.insert(gathered_.end(), pos, pos + sizeof(h));
    gathered_.insert(gathered_.end(), payload_->begin(), payload_->end());
    return gathered_.size() + sizeof(h) + payload_->size() <= gather_bytes
           || flush();
  }

  std::optional<uint64_t> next_ack(std::chrono::milliseconds wait) override {
    if (!flush())
      return std::nullopt;
    auto ready = out_.wait_readable(wait);
    if (ready < 0)
      error_ = out_.error();
    if (ready <= 0)
      return std::nullopt;
    uint64_t count = 0;
    if (!read_all(out_, &count, sizeof(count))) {
      error_ = "no acknowledgement from the peer: " + out_.error();
      return std::nullopt;
    }
    return count;
  }

  bool round_trip(double timeout_seconds) override {
    if (!write_frame(1))
      return false;
    auto wait = std::chrono::milliseconds{
      static_cast<int64_t>(timeout_seconds * 1000)};
    if (out_.wait_readable(wait) <= 0) {
      error_ = "no reply from the peer";
      return false;
    }
    uint64_t t = 0;
    if (!read_all(out_, &t, sizeof(t))) {
      error_ = "no reply from the peer: " + out_.error();
      return false;
    }
    return true;
  }

private:
  /// Writes the gathered messages.
  bool flush() {
    if (gathered_.empty())
      return true;
    iovec iov{gathered_.data(), gathered_.size()};
    gathered_.clear();
    if (!out_.write_all(&iov, 1)) {
      error_ = out_.error();
      return false;
    }
    return true;
  }

  bool write_frame(uint64_t kind) {
    frame_header h{payload_->size(), kind};
    iovec iov[2] = {{&h, sizeof(h)},
                    {const_cast<char*>(payload_->data()), payload_->size()}};
    if (!out_.write_all(iov, 2)) {
      error_ = out_.error();
      return false;
    }
    return true;
  }

  byte_stream& out_;
  std::shared_ptr<const std::vector<char>> payload_;
  std::vector<char> gathered_;
};

/// The receiving end's reads: many small messages per read call.
class frame_reader {
public:
  explicit frame_reader(byte_stream& in) : in_(in), buf_(gather_bytes) {
    // nop
  }

  /// Reads the next header; false at the end of the stream.
  bool header(frame_header& h) {
    if (!fill(sizeof(h)))
      return false;
    std::memcpy(&h, buf_.data() + begin_, sizeof(h));
    begin_ += sizeof(h);
    return true;
  }

  /// Returns the next `size` bytes, valid until the next call; nullptr at
  /// the end of the stream.
  const char* payload(size_t size) {
    if (size <= buf_.size()) {
      if (!fill(size))
        return nullptr;
      auto* result = buf_.data() + begin_;
      begin_ += size;
      return result;
    }
    // Larger than the read buffer: what it holds, then the rest directly.
    if (big_.size() < size)
      big_.resize(size);
    auto held = end_ - begin_;
    std::memcpy(big_.data(), buf_.data() + begin_, held);
    begin_ = end_ = 0;
    if (!read_all(in_, big_.data() + held, size - held))
      return nullptr;
    return big_.data();
  }

private:
  /// Makes `n` bytes (at most the buffer's size) available from `begin_`.
  bool fill(size_t n) {
    if (end_ - begin_ >= n)
      return true;
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    while (end_ < n) {
      auto got = in_.read_some(buf_.data() + end_, buf_.size() - end_);
      if (got == 0)
        return false;
      end_ += got;
    }
    return true;
  }

  byte_stream& in_;
  std::vector<char> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  std::vector<char> big_;
};

} // namespace

std::unique_ptr<channel>
make_frame_channel(byte_stream& out,
                   std::shared_ptr<const std::vector<char>> payload) {
  return std::make_unique<frame_channel>(out, std::move(payload));
}

void serve_frames(byte_stream& in, std::atomic<uint64_t>& count,
                  std::atomic<uint64_t>& ack_every) {
  frame_reader reader{in};
  uint64_t checksum = 0;
  frame_header h;
  while (reader.header(h)) {
    auto* buf = reader.payload(static_cast<size_t>(h.size));
    if (buf == nullptr)
      break;
    if (h.size > 0)
      checksum += static_cast<unsigned char>(buf[0])
                  + static_cast<unsigned char>(buf[h.size - 1]);
    uint64_t answer = 0;
    if (h.kind == 1) {
      answer = now_ns();
    } else {
      auto n = count.fetch_add(1, std::memory_order_relaxed) + 1;
      if (n % ack_every.load(std::memory_order_relaxed) != 0)
        continue;
      answer = n;
    }
    iovec iov{&answer, sizeof(answer)};
    if (!in.write_all(&iov, 1))
      break;
  }
  // Keeps the reads of first and last bytes observable.
  asm volatile("" : : "r"(checksum) : "memory");
}

} // namespace ferry::bench
