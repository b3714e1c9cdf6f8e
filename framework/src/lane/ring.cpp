// ring: a shared-memory SPSC byte ring (see lane/ring.hpp).
//
// Protocol. `written` counts the bytes the writer published, `read` those
// the reader consumed; both only grow, and `written - read` is at most the
// capacity. The writer copies bytes in, then publishes them with a release
// store of `written`; the reader acquires `written`, copies out, then
// releases `read`. A side that finds nothing to do announces that it sleeps
// (`reader_sleeps` / `writer_sleeps`), checks once more, and sleeps on its
// futex word with a timeout; the other side, after publishing, wakes it
// when it announced so. Writers announce by counting (`writer_sleeps`):
// threads of a lane's sender may wait for room at once (`await_room`), and
// a wake-up wakes them all. The announcement and the re-check are sequentially
// consistent with the other side's publish and its check of the
// announcement (Dekker's pattern), so no wake-up is lost; the timeout
// bounds the damage if a hostile peer clears a word anyway.
#include "lane/ring.hpp"

#include "clock.hpp"

#include "ferry/errc.hpp"

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <random>

namespace bip = boost::interprocess;

namespace ferry::detail::lane {

namespace {

constexpr uint64_t ring_magic = 0x31656e616c797266; // "frylane1", little-endian
constexpr uint32_t ring_version = 1;
constexpr uint64_t min_capacity = 4096;
constexpr uint64_t max_capacity = uint64_t{1} << 32;
constexpr const char* name_prefix = "ferry-lane-";
/// How long a side sleeps before it looks at the closed flag again.
constexpr std::chrono::milliseconds poll_interval{100};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected,
                std::chrono::milliseconds timeout) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  // Not FUTEX_PRIVATE: the word is shared with another process.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected,
          &ts, nullptr, 0);
}

/// Wakes every thread sleeping on `word`.
void futex_wake(std::atomic<uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX,
          nullptr, nullptr, 0);
}

std::string new_name() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::string{name_prefix} + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1)) + "-" +
         std::to_string(rng() & 0xffffffff);
}

caf::error lane_error(const std::string& what) {
  return caf::make_error(errc::lane_failed, what);
}

} // namespace

/// The shared header, at the start of the object; the data follows it.
struct ring_header {
  uint64_t magic;
  uint32_t version;
  uint32_t reserved;
  uint64_t capacity;
  alignas(64) std::atomic<uint64_t> written;
  std::atomic<uint32_t> writer_sleeps;
  std::atomic<uint32_t> space_word;
  alignas(64) std::atomic<uint64_t> read;
  std::atomic<uint32_t> reader_sleeps;
  std::atomic<uint32_t> data_word;
  alignas(64) std::atomic<uint32_t> closed;
};

namespace {

constexpr uint64_t header_bytes = ring::header_size;
static_assert(sizeof(ring_header) <= header_bytes);
static_assert(offsetof(ring_header, written) == ring::written_offset);
// The layout docs/wire-format.md gives ("Same-host lanes").
static_assert(offsetof(ring_header, capacity) == 16);
static_assert(offsetof(ring_header, space_word) == 76);
static_assert(offsetof(ring_header, read) == ring::read_offset);
static_assert(offsetof(ring_header, data_word) == 140);
static_assert(offsetof(ring_header, closed) == 192);

} // namespace

struct ring::mapping {
  bip::mapped_region region;
};

ring::ring(std::string name, std::unique_ptr<mapping> map)
  : name_(std::move(name)),
    map_(std::move(map)) {
  auto* base = static_cast<std::byte*>(map_->region.get_address());
  head_ = reinterpret_cast<ring_header*>(base);
  data_ = base + header_bytes;
  capacity_ = head_->capacity;
}

ring::ring(ring&& other) noexcept
  : name_(std::move(other.name_)),
    map_(std::move(other.map_)),
    head_(std::exchange(other.head_, nullptr)),
    data_(std::exchange(other.data_, nullptr)),
    capacity_(std::exchange(other.capacity_, 0)),
    unlinked_(std::exchange(other.unlinked_, true)),
    spin_(other.spin_),
    spin_misses_(other.spin_misses_),
    waits_since_poll_(other.waits_since_poll_),
    polls_(other.polls_.load()),
    hits_(other.hits_.load()) {
  // nop
}

ring& ring::operator=(ring&& other) noexcept {
  if (this != &other) {
    unlink();
    name_ = std::move(other.name_);
    map_ = std::move(other.map_);
    head_ = std::exchange(other.head_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    unlinked_ = std::exchange(other.unlinked_, true);
    spin_ = other.spin_;
    spin_misses_ = other.spin_misses_;
    waits_since_poll_ = other.waits_since_poll_;
    polls_ = other.polls_.load();
    hits_ = other.hits_.load();
  }
  return *this;
}

ring::~ring() {
  unlink();
}

caf::expected<ring> ring::create(uint64_t capacity) {
  if (capacity < min_capacity || capacity > max_capacity ||
      (capacity & (capacity - 1)) != 0)
    return lane_error("lane capacity " + std::to_string(capacity) +
                      " is not a power of two between 4 KiB and 4 GiB");
  auto name = new_name();
  try {
    bip::permissions owner_only{0600};
    bip::shared_memory_object shm{bip::create_only, name.c_str(),
                                  bip::read_write, owner_only};
    shm.truncate(static_cast<bip::offset_t>(header_bytes + capacity));
    auto map = std::make_unique<mapping>();
    map->region = bip::mapped_region{shm, bip::read_write};
    auto* head = new (map->region.get_address()) ring_header{};
    head->magic = ring_magic;
    head->version = ring_version;
    head->capacity = capacity;
    return ring{std::move(name), std::move(map)};
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    return lane_error("cannot create the lane ring " + name + " of " +
                      std::to_string(capacity) + " bytes: " + e.what() +
                      " (is /dev/shm full or missing?)");
  }
}

caf::expected<ring> ring::open(const std::string& name) {
  if (name.rfind(name_prefix, 0) != 0 || name.size() > 100 ||
      name.find('/') != std::string::npos)
    return lane_error("the peer named lane ring \"" + name.substr(0, 100) +
                      "\", which is not a ferry lane name");
  try {
    bip::shared_memory_object shm{bip::open_only, name.c_str(),
                                  bip::read_write};
    bip::offset_t size = 0;
    if (!shm.get_size(size) || size < static_cast<bip::offset_t>(header_bytes))
      return lane_error("lane ring " + name + " is too small (" +
                        std::to_string(size) + " bytes) for its header");
    auto map = std::make_unique<mapping>();
    map->region = bip::mapped_region{shm, bip::read_write};
    auto* head = static_cast<const ring_header*>(map->region.get_address());
    auto capacity = head->capacity;
    if (head->magic != ring_magic || head->version != ring_version)
      return lane_error("lane ring " + name +
                        " has another format (magic or version); run the "
                        "same ferry version on both nodes");
    if (capacity < min_capacity || capacity > max_capacity ||
        (capacity & (capacity - 1)) != 0 ||
        static_cast<uint64_t>(size) != header_bytes + capacity)
      return lane_error("lane ring " + name + " claims a capacity of " +
                        std::to_string(capacity) + " bytes in an object of " +
                        std::to_string(size) + " bytes");
    return ring{name, std::move(map)};
  } catch (const bip::interprocess_exception& e) {
    return lane_error("cannot open the lane ring " + name + ": " + e.what());
  }
}

size_t ring::remove_orphans() {
  size_t removed = 0;
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator{"/dev/shm", ec}) {
    auto file = entry.path().filename().string();
    if (file.rfind(name_prefix, 0) != 0)
      continue;
    auto rest = file.substr(std::strlen(name_prefix));
    auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || dash > 10)
      continue;
    auto pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (pid <= 0)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
        bip::shared_memory_object::remove(file.c_str()))
      ++removed;
  }
  return removed;
}

void ring::unlink() noexcept {
  if (!unlinked_ && !name_.empty()) {
    bip::shared_memory_object::remove(name_.c_str());
    unlinked_ = true;
  }
}

void ring::close() noexcept {
  if (head_ == nullptr)
    return;
  head_->closed.store(1, std::memory_order_seq_cst);
  head_->data_word.fetch_add(1, std::memory_order_seq_cst);
  head_->space_word.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(head_->data_word);
  futex_wake(head_->space_word);
}

bool ring::closed() const noexcept {
  return head_ == nullptr || head_->closed.load(std::memory_order_acquire) != 0;
}

void ring::copy_out(uint64_t pos, std::byte* dst, uint64_t n) const noexcept {
  if (n == 0) // an empty record's buffer may be null
    return;
  auto at = pos & (capacity_ - 1);
  auto first = std::min(n, capacity_ - at);
  std::memcpy(dst, data_ + at, first);
  if (first < n)
    std::memcpy(dst + first, data_, n - first);
}

void ring::copy_in(uint64_t pos, const std::byte* src, uint64_t n) noexcept {
  if (n == 0) // an empty piece's data may be null
    return;
  auto at = pos & (capacity_ - 1);
  auto first = std::min(n, capacity_ - at);
  std::memcpy(data_ + at, src, first);
  if (first < n)
    std::memcpy(data_, src + first, n - first);
}

void ring::wake_reader() noexcept {
  if (head_->reader_sleeps.load(std::memory_order_seq_cst) != 0) {
    head_->data_word.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(head_->data_word);
  }
}

void ring::wake_writer() noexcept {
  if (head_->writer_sleeps.load(std::memory_order_seq_cst) != 0) {
    head_->space_word.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(head_->space_word);
  }
}

void ring::poll_for_data(uint64_t read, uint64_t n) noexcept {
  // Two misses in a row: probe once every 16 waits until a poll hits.
  constexpr uint32_t max_misses = 2;
  constexpr uint32_t probe_every = 16;
  if (spin_.count() <= 0)
    return;
  if (spin_misses_ >= max_misses && ++waits_since_poll_ < probe_every)
    return;
  waits_since_poll_ = 0;
  polls_.fetch_add(1, std::memory_order_relaxed);
  auto until = clock::steady().now() + spin_;
  for (uint32_t i = 1;; ++i) {
    if (head_->written.load(std::memory_order_acquire) - read >= n) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      spin_misses_ = 0;
      return;
    }
    if (closed())
      return;
    // Yield, not pause: on a machine with few cores the thread that will
    // write (or the actor that will answer) may need this one.
    sched_yield();
    if (i % 16 == 0 && clock::steady().now() >= until)
      break;
  }
  if (spin_misses_ < max_misses)
    ++spin_misses_;
}

ring::status ring::await_data(uint64_t n, std::chrono::milliseconds wait) {
  auto deadline = clock::steady().now() + wait;
  auto read = head_->read.load(std::memory_order_relaxed);
  if (head_->written.load(std::memory_order_acquire) - read < n)
    poll_for_data(read, n);
  for (;;) {
    // What was written before the ring closed is still read.
    auto written = head_->written.load(std::memory_order_acquire);
    if (written - read > capacity_) {
      close();
      return status::corrupt;
    }
    if (written - read >= n)
      return status::done;
    if (closed())
      return status::closed;
    auto now = clock::steady().now();
    if (now >= deadline)
      return status::empty;
    auto word = head_->data_word.load(std::memory_order_seq_cst);
    head_->reader_sleeps.store(1, std::memory_order_seq_cst);
    if (head_->written.load(std::memory_order_seq_cst) - read < n && !closed())
      futex_wait(head_->data_word, word,
                 std::min(poll_interval,
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - now) +
                            std::chrono::milliseconds{1}));
    head_->reader_sleeps.store(0, std::memory_order_relaxed);
  }
}

ring::status ring::await_space(uint64_t n) {
  auto written = head_->written.load(std::memory_order_relaxed);
  for (;;) {
    if (closed())
      return status::closed;
    auto read = head_->read.load(std::memory_order_acquire);
    if (written - read > capacity_) {
      close();
      return status::corrupt;
    }
    if (capacity_ - (written - read) >= n)
      return status::done;
    auto word = head_->space_word.load(std::memory_order_seq_cst);
    head_->writer_sleeps.fetch_add(1, std::memory_order_seq_cst);
    if (capacity_ - (written - head_->read.load(std::memory_order_seq_cst)) <
          n &&
        !closed())
      futex_wait(head_->space_word, word, poll_interval);
    head_->writer_sleeps.fetch_sub(1, std::memory_order_relaxed);
  }
}

namespace {

uint64_t total_of(std::span<const std::span<const std::byte>> pieces) {
  uint64_t total = 0;
  for (auto& piece : pieces)
    total += piece.size();
  return total;
}

} // namespace

void ring::put_whole(std::span<const std::span<const std::byte>> pieces,
                     uint64_t total) noexcept {
  std::byte length[8];
  encode_length(total, length);
  auto pos = head_->written.load(std::memory_order_relaxed);
  copy_in(pos, length, sizeof(length));
  pos += sizeof(length);
  for (auto& piece : pieces) {
    copy_in(pos, piece.data(), piece.size());
    pos += piece.size();
  }
  head_->written.store(pos, std::memory_order_seq_cst);
  wake_reader();
}

ring::status
ring::try_write(std::span<const std::span<const std::byte>> pieces) {
  auto total = total_of(pieces);
  if (closed())
    return status::closed;
  if (8 + total > capacity_ / 2)
    return status::full;
  auto written = head_->written.load(std::memory_order_relaxed);
  auto read = head_->read.load(std::memory_order_acquire);
  if (written - read > capacity_) {
    close();
    return status::corrupt;
  }
  if (capacity_ - (written - read) < 8 + total)
    return status::full;
  put_whole(pieces, total);
  return status::done;
}

ring::status ring::write(std::span<const std::span<const std::byte>> pieces) {
  auto total = total_of(pieces);
  // A record up to half the ring goes in whole, published once.
  if (8 + total <= capacity_ / 2) {
    if (auto st = await_space(8 + total); st != status::done)
      return st;
    put_whole(pieces, total);
    return status::done;
  }
  // A longer one streams: the length, then each piece, in parts of at most
  // half the ring.
  std::byte length[8];
  encode_length(total, length);
  auto put = [this](const std::byte* src, uint64_t n) {
    while (n > 0) {
      auto chunk = std::min<uint64_t>(n, capacity_ / 2);
      if (auto st = await_space(chunk); st != status::done)
        return st;
      auto pos = head_->written.load(std::memory_order_relaxed);
      copy_in(pos, src, chunk);
      head_->written.store(pos + chunk, std::memory_order_seq_cst);
      wake_reader();
      src += chunk;
      n -= chunk;
    }
    return status::done;
  };
  if (auto st = put(length, sizeof(length)); st != status::done)
    return st;
  for (auto& piece : pieces)
    if (auto st = put(piece.data(), piece.size()); st != status::done)
      return st;
  return status::done;
}

void ring::encode_length(uint64_t total, std::byte (&out)[8]) noexcept {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<std::byte>(total >> (8 * i));
}

ring::status ring::put_some(std::span<const std::byte> bytes, uint64_t& put) {
  put = 0;
  if (closed())
    return status::closed;
  auto written = head_->written.load(std::memory_order_relaxed);
  auto read = head_->read.load(std::memory_order_acquire);
  if (written - read > capacity_) {
    close();
    return status::corrupt;
  }
  auto n = std::min<uint64_t>(bytes.size(), capacity_ - (written - read));
  if (n > 0) {
    copy_in(written, bytes.data(), n);
    head_->written.store(written + n, std::memory_order_seq_cst);
    wake_reader();
    put = n;
  }
  return n == bytes.size() ? status::done : status::full;
}

ring::status ring::await_room(uint64_t n, std::chrono::milliseconds wait) {
  // Called by threads that do not write (the writer may be another one):
  // `read` first, then `written`, so the difference never runs backwards
  // here. A counter out of range is the writer's to find (`put_some`).
  n = std::min(n, capacity_);
  auto used = [this] {
    auto read = head_->read.load(std::memory_order_seq_cst);
    return head_->written.load(std::memory_order_seq_cst) - read;
  };
  auto deadline = clock::steady().now() + wait;
  for (;;) {
    if (closed())
      return status::closed;
    auto in_use = used();
    if (in_use > capacity_)
      return status::corrupt;
    if (capacity_ - in_use >= n)
      return status::done;
    auto now = clock::steady().now();
    if (now >= deadline)
      return status::full;
    auto word = head_->space_word.load(std::memory_order_seq_cst);
    head_->writer_sleeps.fetch_add(1, std::memory_order_seq_cst);
    in_use = used();
    if (in_use <= capacity_ && capacity_ - in_use < n && !closed())
      futex_wait(head_->space_word, word,
                 std::min(poll_interval,
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - now) +
                            std::chrono::milliseconds{1}));
    head_->writer_sleeps.fetch_sub(1, std::memory_order_relaxed);
  }
}

ring::status ring::read(std::vector<std::byte>& out, uint64_t max_record,
                        std::chrono::milliseconds wait) {
  if (auto st = await_data(8, wait); st != status::done)
    return st;
  auto pos = head_->read.load(std::memory_order_relaxed);
  std::byte length[8];
  copy_out(pos, length, sizeof(length));
  uint64_t total = 0;
  for (int i = 0; i < 8; ++i)
    total |= static_cast<uint64_t>(length[i]) << (8 * i);
  if (total > max_record) {
    close();
    return status::corrupt;
  }
  pos += sizeof(length);
  head_->read.store(pos, std::memory_order_seq_cst);
  wake_writer();
  // Grown as the bytes come, so a length the peer claims but never sends
  // allocates nothing.
  out.clear();
  uint64_t done = 0;
  while (done < total) {
    // A record that began is read to its end, however long that takes.
    auto st = await_data(1, std::chrono::hours{24});
    if (st == status::empty)
      continue;
    if (st != status::done)
      return st;
    auto available = head_->written.load(std::memory_order_acquire) - pos;
    auto chunk = std::min(available, total - done);
    out.resize(done + chunk);
    copy_out(pos, out.data() + done, chunk);
    pos += chunk;
    done += chunk;
    head_->read.store(pos, std::memory_order_seq_cst);
    wake_writer();
  }
  return status::done;
}

} // namespace ferry::detail::lane
