#include "store_impl.hpp"

#include "ferry/store/errc.hpp"
#include "ferry/store/log.hpp"

#include <caf/make_message.hpp>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string_view>

// Invariants of this file, in prose:
//
// - Every access to the segment's tables happens under `guard`, except
//   reading an object's payload through a live handle: the payload of an
//   object with a live handle never moves and never changes (it is neither
//   spilled nor freed while `handles > 0`).
// - Each table entry has one marker field (see layout.hpp). On creation the
//   marker is written after the other fields, on removal it is cleared before
//   the entry is unlinked; `commit()` keeps the compiler from reordering
//   stores around it. A process that dies inside a critical section therefore
//   leaves primary entries that are either whole or absent, and
//   `recover_locked` rebuilds the rest.

namespace bip = boost::interprocess;

namespace ferry::store::detail {

namespace {

using namespace std::literals;

/// Keeps the compiler from moving stores across a marker write. Stores to
/// shared memory by a process that dies stay visible (same physical pages).
inline void commit() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

uint64_t round_up(uint64_t x, uint64_t to) noexcept {
  return (x + to - 1) / to * to;
}

uint32_t bits_for(uint32_t n) noexcept {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < n)
    ++bits;
  return bits;
}

std::atomic<void (*)()> create_hook{nullptr};

std::atomic<void (*)()> io_hook{nullptr};

void run_io_hook() {
  if (auto hook = io_hook.load())
    hook();
}

/// How often `open_segment` starts over when the segment it waits on loses
/// its name (its creator failed and removed it, or it was replaced).
constexpr int max_open_attempts = 4;

std::mutex registry_mtx;

std::map<std::string, std::weak_ptr<store_impl>>& registry() {
  static std::map<std::string, std::weak_ptr<store_impl>> instance;
  return instance;
}

template <class... Ts>
caf::error fail(errc code, Ts&&... xs) {
  std::ostringstream out;
  (out << ... << xs);
  return caf::make_error(code, out.str());
}

std::string errno_text(int err) {
  return std::strerror(err);
}

/// Returns an error if the creator of segment `name` ran in PID namespace
/// `theirs` and this process runs in another one, `ours` (0: unknown).
caf::error check_pid_namespace(const std::string& name, uint64_t theirs,
                               uint64_t ours) {
  if (theirs == 0 || ours == 0 || theirs == ours)
    return caf::none;
  return fail(errc::foreign_pid_namespace, "store '", name,
              "' is used from another PID namespace (its segment was "
              "created in pid:[", theirs, "], this process runs in pid:[",
              ours, "]), e.g. by a container sharing /dev/shm; a ferry store "
              "needs all its processes in one PID namespace, since it tells "
              "live processes from dead ones by pid; run them in one PID "
              "namespace (e.g. share the pod's process namespace), or give "
              "each PID namespace its own store name (ferry.store.name, "
              "store_config::name)");
}

bool process_alive(int32_t pid, uint64_t start_time) noexcept {
  if (pid <= 0)
    return false;
  char state = 0;
  uint64_t now = 0;
  if (read_process_stat(pid, state, now)) {
    // A zombie (killed, not yet waited for) holds nothing any more.
    return now == start_time && state != 'Z' && state != 'X';
  }
  if (errno == ENOENT)
    return false;
  // /proc not readable: fall back to kill(0).
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

/// A file of the spill directory that belongs to one store.
struct spill_file {
  /// Id of the object the file holds.
  uint64_t id;
  /// True for `<store>.<id>.spill.tmp` (being written), false for
  /// `<store>.<id>.spill`.
  bool tmp;
};

/// Returns what `file` is if it is named exactly `<store>.<id>.spill` or
/// `<store>.<id>.spill.tmp`, or nothing. The spill directory is shared by
/// all stores of a user, so a prefix match would also take the files of a
/// store named `<store>.<more>`; requiring digits and then the exact suffix
/// makes the split of a file name into store and id unambiguous.
std::optional<spill_file> parse_spill_file(std::string_view file,
                                           std::string_view store) noexcept {
  if (!file.starts_with(store) || file.size() <= store.size()
      || file[store.size()] != '.')
    return std::nullopt;
  file.remove_prefix(store.size() + 1);
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(file.data(), file.data() + file.size(), id);
  if (ec != std::errc{} || end == file.data())
    return std::nullopt;
  auto rest = file.substr(static_cast<size_t>(end - file.data()));
  if (rest == ".spill")
    return spill_file{id, false};
  if (rest == ".spill.tmp")
    return spill_file{id, true};
  return std::nullopt;
}

bool write_all(int fd, const std::byte* data, uint64_t size) {
  while (size > 0) {
    auto n = ::write(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

bool read_all(int fd, std::byte* data, uint64_t size) {
  while (size > 0) {
    auto n = ::read(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (n == 0) {
      errno = EIO; // file shorter than the object
      return false;
    }
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace

bool read_process_stat(int32_t pid, char& state,
                       uint64_t& start_time) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  auto fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[1024];
  auto n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  // The command name (field 2) may contain spaces and parentheses: fields
  // are counted from the last ')'. Field 3 is the state, 22 the start time.
  auto* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ')
    return false;
  p += 2;
  state = *p;
  int field = 3;
  while (*p != '\0' && field < 22) {
    if (*p == ' ')
      ++field;
    ++p;
  }
  start_time = std::strtoull(p, nullptr, 10);
  return true;
}

uint64_t process_start_time(int32_t pid) noexcept {
  char state = 0;
  uint64_t start_time = 0;
  return read_process_stat(pid, state, start_time) ? start_time : 0;
}

uint64_t pid_namespace() noexcept {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0)
    return 0;
  return static_cast<uint64_t>(st.st_ino);
}

// -- guard --------------------------------------------------------------------

/// Takes the segment's robust mutex. If the previous owner died, repairs the
/// segment and marks the mutex consistent before the caller goes on.
class store_impl::guard {
public:
  explicit guard(store_impl& self) : self_(self) {
    lock();
  }

  ~guard() {
    unlock();
    // Logged after unlocking: the hook may call into the store.
    if (recovered_)
      log_warning("ferry.store: store '" + self_.name_
                  + "': a process died holding the store lock; the segment "
                    "was repaired and the dead process reaped");
  }

  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  /// Takes the lock (again). Returns `ok()`.
  bool lock() {
    auto rc = ::pthread_mutex_lock(&self_.hdr_->mutex);
    if (rc == EOWNERDEAD) {
      self_.recover_locked();
      rc = ::pthread_mutex_consistent(&self_.hdr_->mutex);
      recovered_ = true;
    }
    rc_ = rc;
    return rc_ == 0;
  }

  /// Releases the lock early (e.g. around spill I/O).
  void unlock() {
    if (rc_ == 0) {
      ::pthread_mutex_unlock(&self_.hdr_->mutex);
      rc_ = -1;
    }
  }

  bool ok() const noexcept {
    return rc_ == 0;
  }

  caf::error error() const {
    return fail(errc::lock_failed, "store '", self_.name_,
                "': cannot take the store lock: ",
                errno_text(rc_ < 0 ? EINVAL : rc_),
                "; remove the store with `ferry-store remove ", self_.name_,
                "` once no process uses it");
  }

private:
  store_impl& self_;
  int rc_ = 0;
  bool recovered_ = false;
};

// -- attach / detach ----------------------------------------------------------

store_impl::store_impl(attach_tag, const store_config& cfg)
  : cfg_(cfg), name_(cfg.name) {
  pid_ = static_cast<int32_t>(::getpid());
  start_time_ = process_start_time(pid_);
  pid_namespace_ = pid_namespace();
}

caf::expected<std::shared_ptr<store_impl>>
store_impl::attach(const store_config& cfg) {
  if (cfg.name.empty() || cfg.name.size() > 200
      || cfg.name.find('/') != std::string::npos)
    return fail(errc::invalid_config, "store name '", cfg.name,
                "' is not valid: use 1 to 200 characters without '/'");
  if (cfg.capacity < min_block_size)
    return fail(errc::segment_too_small, "store '", cfg.name, "': capacity ",
                cfg.capacity, " bytes is too small; use at least ",
                min_block_size, " bytes");
  if (cfg.capacity > max_capacity)
    return fail(errc::invalid_config, "store '", cfg.name, "': capacity ",
                cfg.capacity, " bytes is too large; use at most ",
                max_capacity, " bytes (128 PiB)");
  if (cfg.max_objects == 0 || cfg.max_objects > (1u << 24)
      || cfg.max_processes == 0 || cfg.max_processes > 65536
      || cfg.max_tickets == 0 || cfg.max_tickets > (1u << 24))
    return fail(errc::invalid_config, "store '", cfg.name,
                "': max_objects and max_tickets must be in 1..16777216, "
                "max_processes in 1..65536");
  std::lock_guard lock{registry_mtx};
  auto& reg = registry();
  if (auto i = reg.find(cfg.name); i != reg.end()) {
    // Share the attachment, unless its segment was removed since (then
    // this attach creates or opens the segment now under that name).
    if (auto existing = i->second.lock(); existing && existing->current())
      return existing;
  }
  auto impl = std::make_shared<store_impl>(attach_tag{}, cfg);
  if (auto err = impl->open_segment())
    return err;
  if (auto err = impl->register_process())
    return err;
  if (auto reaped = impl->reap(); !reaped)
    return std::move(reaped.error());
  impl->start_reaper();
  reg[cfg.name] = impl;
  return impl;
}

bool store_impl::current() const noexcept {
  struct stat mine {};
  struct stat named {};
  auto path = "/dev/shm/" + name_;
  return ::fstat(shm_.get_mapping_handle().handle, &mine) == 0
         && ::stat(path.c_str(), &named) == 0 && mine.st_ino == named.st_ino
         && mine.st_dev == named.st_dev;
}

std::shared_ptr<store_impl> store_impl::find_by_token(uint64_t token) {
  std::lock_guard lock{registry_mtx};
  for (auto& [key, weak] : registry())
    if (auto impl = weak.lock(); impl && impl->token() == token)
      return impl;
  return nullptr;
}

store_impl::~store_impl() {
  {
    std::lock_guard lock{reaper_mtx_};
    stopping_ = true;
  }
  reaper_cv_.notify_all();
  if (reaper_.joinable())
    reaper_.join();
  if (hdr_ != nullptr && self_ != npos32) {
    guard g{*this};
    if (g.ok())
      unregister_locked();
  }
}

caf::error store_impl::open_segment(int attempt) {
  auto max_holders = 2 * cfg_.max_objects + cfg_.max_tickets;
  auto capacity = cfg_.capacity / block_align * block_align;
  auto header_size = round_up(sizeof(segment_header), 64);
  auto process_offset = header_size;
  auto slot_offset = round_up(
    process_offset + uint64_t{cfg_.max_processes} * sizeof(process_entry), 64);
  auto holder_offset = round_up(
    slot_offset + uint64_t{cfg_.max_objects} * sizeof(slot_entry), 64);
  auto ticket_offset = round_up(
    holder_offset + uint64_t{max_holders} * sizeof(holder_entry), 64);
  auto data_offset = round_up(
    ticket_offset + uint64_t{cfg_.max_tickets} * sizeof(ticket_entry), 4096);
  auto segment_size = data_offset + capacity;
  if (!cfg_.open_only) {
    try {
      bip::permissions perms;
      perms.set_permissions(0600);
      shm_ = bip::shared_memory_object(bip::create_only, name_.c_str(),
                                       bip::read_write, perms);
      created_ = true;
    } catch (const bip::interprocess_exception& ex) {
      if (ex.get_error_code() != bip::already_exists_error)
        return fail(errc::segment_unavailable, "store '", name_,
                    "': cannot create shared memory segment /dev/shm/", name_,
                    ": ", ex.what());
    }
  }
  if (created_) {
    try {
      shm_.truncate(static_cast<bip::offset_t>(segment_size));
    } catch (const bip::interprocess_exception& ex) {
      bip::shared_memory_object::remove(name_.c_str());
      return fail(errc::segment_unavailable, "store '", name_, "': cannot size "
                  "the segment to ", segment_size, " bytes: ", ex.what());
    }
    if (auto err = map_segment()) {
      bip::shared_memory_object::remove(name_.c_str());
      return err;
    }
    // Say who creates the segment before the slow part, then allocate and
    // map all pages, fill in the header, and publish it by writing the magic
    // last.
    auto* h = new (base_) segment_header{};
    h->creator_start_time = start_time_;
    h->creator_pid_namespace = pid_namespace_;
    commit();
    h->creator_pid = pid_;
    if (cfg_.prefault) {
      auto rc = ::posix_fallocate(shm_.get_mapping_handle().handle, 0,
                                  static_cast<off_t>(segment_size));
      if (rc != 0) {
        bip::shared_memory_object::remove(name_.c_str());
        return fail(errc::segment_unavailable, "store '", name_,
                    "': cannot allocate ", segment_size,
                    " bytes of shared memory (", errno_text(rc),
                    "); free space in /dev/shm or lower the capacity");
      }
    }
    populate();
    h->version = layout_version;
    h->header_size = sizeof(segment_header);
    h->entry_sizes = entry_sizes();
    std::random_device rd;
    h->token = (uint64_t{rd()} << 32 | rd())
               ^ static_cast<uint64_t>(
                 std::chrono::steady_clock::now().time_since_epoch().count());
    if (h->token == 0)
      h->token = 1;
    h->segment_size = segment_size;
    h->process_offset = process_offset;
    h->slot_offset = slot_offset;
    h->holder_offset = holder_offset;
    h->ticket_offset = ticket_offset;
    h->data_offset = data_offset;
    h->max_processes = cfg_.max_processes;
    h->max_objects = cfg_.max_objects;
    h->max_holders = max_holders;
    h->max_tickets = cfg_.max_tickets;
    h->slot_bits = bits_for(cfg_.max_objects);
    h->ticket_bits = bits_for(cfg_.max_tickets);
    h->spill_limit = cfg_.spill_limit;
    h->spilling = cfg_.spilling ? 1 : 0;
    std::snprintf(h->name, max_name, "%s", name_.c_str());
    auto dir = cfg_.spill_directory.empty()
                 ? store_config::default_spill_directory()
                 : cfg_.spill_directory;
    if (dir.size() >= max_path - 64) {
      bip::shared_memory_object::remove(name_.c_str());
      return fail(errc::invalid_config, "store '", name_,
                  "': spill directory path is too long (", dir.size(),
                  " characters; at most ", max_path - 64, ")");
    }
    std::snprintf(h->spill_directory, max_path, "%s", dir.c_str());
    pthread_mutexattr_t attr;
    ::pthread_mutexattr_init(&attr);
    ::pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    ::pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    auto rc = ::pthread_mutex_init(&h->mutex, &attr);
    ::pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
      bip::shared_memory_object::remove(name_.c_str());
      return fail(errc::segment_unavailable, "store '", name_,
                  "': cannot initialize the robust mutex: ", errno_text(rc));
    }
    h->next_sequence = 1;
    h->next_ticket_sequence = 1;
    hdr_ = h;
    procs_ = reinterpret_cast<process_entry*>(base_ + process_offset);
    slots_ = reinterpret_cast<slot_entry*>(base_ + slot_offset);
    holders_ = reinterpret_cast<holder_entry*>(base_ + holder_offset);
    tickets_ = reinterpret_cast<ticket_entry*>(base_ + ticket_offset);
    data_ = base_ + data_offset;
    for (uint32_t i = 0; i < h->max_processes; ++i)
      procs_[i] = process_entry{};
    for (uint32_t i = 0; i < h->max_objects; ++i) {
      slots_[i] = slot_entry{};
      slots_[i].block = npos64;
      slots_[i].holders = npos32;
      slots_[i].io_process = npos32;
      slots_[i].next_free = i + 1 < h->max_objects ? i + 1 : npos32;
    }
    for (uint32_t i = 0; i < max_holders; ++i) {
      holders_[i] = holder_entry{};
      holders_[i].slot = npos32;
      holders_[i].next = i + 1 < max_holders ? i + 1 : npos32;
    }
    for (uint32_t i = 0; i < h->max_tickets; ++i) {
      tickets_[i] = ticket_entry{};
      tickets_[i].next_free = i + 1 < h->max_tickets ? i + 1 : npos32;
    }
    h->free_slot = 0;
    h->free_holder = 0;
    h->free_ticket = 0;
    allocator{h->alloc, data_}.init(capacity);
    h->magic.store(segment_magic, std::memory_order_release);
    return caf::none;
  }
  // Open an existing segment; wait (briefly) for its creator to finish.
  try {
    shm_ = bip::shared_memory_object(bip::open_only, name_.c_str(),
                                     bip::read_write);
  } catch (const bip::interprocess_exception& ex) {
    return fail(errc::segment_unavailable, "store '", name_,
                "': cannot open shared memory segment /dev/shm/", name_, ": ",
                ex.what(),
                cfg_.open_only ? "; is a store with this name running?" : "");
  }
  // Wait for the creator to publish the header: as long as it lives (it
  // may be allocating gigabytes), or 5 s if it has not even said who it is.
  // A creator that fails (e.g. /dev/shm full) removes the name and lives
  // on: once the name no longer names the segment opened here (removed, or
  // replaced by a new segment), start over, a few times.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    bip::offset_t size = 0;
    int32_t creator = 0;
    uint64_t start = 0;
    uint64_t creator_ns = 0;
    if (shm_.get_size(size)
        && static_cast<uint64_t>(size) >= sizeof(segment_header)) {
      if (auto err = map_segment())
        return err;
      auto* h = reinterpret_cast<segment_header*>(base_);
      if (h->magic.load(std::memory_order_acquire) == segment_magic)
        break;
      creator = *static_cast<volatile int32_t*>(&h->creator_pid);
      start = *static_cast<volatile uint64_t*>(&h->creator_start_time);
      creator_ns
        = *static_cast<volatile uint64_t*>(&h->creator_pid_namespace);
      region_ = bip::mapped_region{};
      base_ = nullptr;
    }
    if (!current()) {
      shm_ = bip::shared_memory_object{};
      if (attempt < max_open_attempts)
        return open_segment(attempt + 1);
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the segment was removed or replaced ", attempt,
                  " times while this process waited for its creator to "
                  "initialize it (the creating process failed, e.g. with "
                  "/dev/shm full, or processes keep removing the store); fix "
                  "what the creating process reported and attach again");
    }
    if (creator != 0 && !process_alive(creator, start)) {
      // A creator in another PID namespace looks dead from here.
      if (auto err = check_pid_namespace(name_, creator_ns, pid_namespace_))
        return err;
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the process that created the segment (pid ", creator,
                  ") died before initializing it; remove it with "
                  "`ferry-store remove ", name_, "`");
    }
    if (creator == 0 && std::chrono::steady_clock::now() > deadline)
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the segment exists but was never initialized (did its "
                  "creator die?); remove it with `ferry-store remove ",
                  name_, "`");
    std::this_thread::sleep_for(1ms);
  }
  auto* h = reinterpret_cast<segment_header*>(base_);
  if (h->version != layout_version
      || h->header_size != sizeof(segment_header))
    return fail(errc::incompatible_segment, "store '", name_,
                "': segment has layout version ", h->version,
                " and header size ", h->header_size, ", expected version ",
                layout_version, " and ", sizeof(segment_header),
                "; remove it with `ferry-store remove ", name_, "`");
  // Same version and header: the rest of the header can be read. Say which
  // of the remaining checks failed.
  if (h->entry_sizes != entry_sizes())
    return fail(errc::incompatible_segment, "store '", name_,
                "': segment has layout version ", h->version,
                " but table entry sizes 0x", std::hex, h->entry_sizes,
                ", expected 0x", entry_sizes(), std::dec,
                " (made by a build of ferry with another layout); remove it "
                "with `ferry-store remove ", name_, "`");
  if (h->segment_size != region_.get_size())
    return fail(errc::incompatible_segment, "store '", name_,
                "': segment header says ", h->segment_size,
                " bytes but the segment has ", region_.get_size(),
                " bytes (resized or damaged); remove it with "
                "`ferry-store remove ", name_, "`");
  // Pids and start times name processes only within one PID namespace: a
  // process of another one would take every process here for dead.
  if (auto err = check_pid_namespace(name_, h->creator_pid_namespace,
                                     pid_namespace_))
    return err;
  hdr_ = h;
  procs_ = reinterpret_cast<process_entry*>(base_ + h->process_offset);
  slots_ = reinterpret_cast<slot_entry*>(base_ + h->slot_offset);
  holders_ = reinterpret_cast<holder_entry*>(base_ + h->holder_offset);
  tickets_ = reinterpret_cast<ticket_entry*>(base_ + h->ticket_offset);
  data_ = base_ + h->data_offset;
  populate();
  return caf::none;
}

caf::error store_impl::map_segment() {
  try {
    region_ = bip::mapped_region(shm_, bip::read_write);
  } catch (const bip::interprocess_exception& ex) {
    return fail(errc::segment_unavailable, "store '", name_,
                "': cannot map the segment: ", ex.what());
  }
  base_ = static_cast<std::byte*>(region_.get_address());
  return caf::none;
}

void store_impl::populate() noexcept {
  if (cfg_.prefault) {
    // Populate this process's page tables, so that the first write to a
    // block costs no page fault. Best effort (needs Linux 5.14).
    ::madvise(region_.get_address(), region_.get_size(), MADV_POPULATE_WRITE);
  }
}

caf::error store_impl::register_process() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      guard g{*this};
      if (!g.ok())
        return g.error();
      // A stale entry with our pid belongs to a dead process whose pid was
      // reused: reap it now.
      for (uint32_t i = 0; i < hdr_->max_processes; ++i)
        if (procs_[i].pid == pid_ && procs_[i].start_time != start_time_)
          reap_process_locked(i);
      for (uint32_t i = 0; i < hdr_->max_processes; ++i) {
        if (procs_[i].pid == 0) {
          procs_[i].start_time = start_time_;
          commit();
          procs_[i].pid = pid_;
          self_ = i;
          return caf::none;
        }
      }
    }
    if (auto reaped = reap(); !reaped)
      return std::move(reaped.error());
  }
  return fail(errc::table_full, "store '", name_, "': all ",
              hdr_->max_processes,
              " process entries are taken by live processes; detach some or "
              "create the store with a larger max_processes");
}

void store_impl::start_reaper() {
  if (cfg_.reaper_interval.count() <= 0)
    return;
  reaper_ = std::thread{[this] {
    std::unique_lock lock{reaper_mtx_};
    while (!stopping_) {
      if (reaper_cv_.wait_for(lock, cfg_.reaper_interval,
                              [this] { return stopping_; }))
        break;
      lock.unlock();
      auto reaped = reap();
      static_cast<void>(reaped);
      lock.lock();
    }
  }};
}

caf::error store_impl::remove(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos)
    return fail(errc::invalid_config, "store name '", name,
                "' is not valid: use 1 to 200 characters without '/'");
  // Delete the spill files first (their directory is in the header).
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(),
                                  bip::read_only);
    bip::mapped_region region(shm, bip::read_only);
    if (region.get_size() >= sizeof(segment_header)) {
      auto* h = static_cast<const segment_header*>(region.get_address());
      if (h->magic.load(std::memory_order_acquire) == segment_magic) {
        std::string dir(h->spill_directory,
                        strnlen(h->spill_directory, max_path));
        std::error_code ec;
        for (auto it = std::filesystem::directory_iterator{dir, ec};
             !ec && it != std::filesystem::directory_iterator{};
             it.increment(ec)) {
          // Only this store's files: the directory may be shared with a
          // store named `<name>.<more>`.
          auto file = it->path().filename().string();
          if (parse_spill_file(file, name)) {
            std::error_code ignored;
            std::filesystem::remove(it->path(), ignored);
          }
        }
      }
    }
  } catch (const bip::interprocess_exception&) {
    // Not there or not readable: shared_memory_object::remove reports it.
  }
  if (!bip::shared_memory_object::remove(name.c_str()))
    return fail(errc::segment_unavailable, "no store segment named '", name,
                "' to remove (/dev/shm/", name, ")");
  return caf::none;
}

void store_impl::set_create_hook(void (*hook)()) noexcept {
  create_hook.store(hook);
}

void store_impl::set_io_hook(void (*hook)()) noexcept {
  io_hook.store(hook);
}

// -- lookups ------------------------------------------------------------------

std::string store_impl::describe(object_id id) const {
  return "object " + to_string(id) + " of store '" + name_ + "'";
}

slot_entry* store_impl::lookup_locked(object_id id) noexcept {
  auto value = static_cast<uint64_t>(id);
  if (value == 0)
    return nullptr;
  auto slot = value & ((uint64_t{1} << hdr_->slot_bits) - 1);
  if (slot >= hdr_->max_objects || slots_[slot].id != value)
    return nullptr;
  return &slots_[slot];
}

uint32_t store_impl::find_holder_locked(uint32_t slot,
                                        uint32_t process) noexcept {
  for (auto i = slots_[slot].holders; i != npos32; i = holders_[i].next)
    if (holders_[i].process == process)
      return i;
  return npos32;
}

caf::expected<uint32_t>
store_impl::find_or_add_holder_locked(uint32_t slot, uint32_t process) {
  if (auto i = find_holder_locked(slot, process); i != npos32)
    return i;
  auto i = hdr_->free_holder;
  if (i == npos32)
    return fail(errc::table_full, "store '", name_, "': all ",
                hdr_->max_holders,
                " holder entries are taken; drop handles or create the store "
                "with larger max_objects / max_tickets");
  auto& h = holders_[i];
  hdr_->free_holder = h.next;
  h.process = process;
  h.handles = 0;
  h.tickets = 0;
  h.pins = 0;
  h.parked = 0;
  h.next = slots_[slot].holders;
  commit();
  h.slot = slot;
  slots_[slot].holders = i;
  return i;
}

void store_impl::release_holder_if_empty_locked(uint32_t index) noexcept {
  auto& h = holders_[index];
  if (h.slot == npos32 || h.handles != 0 || h.tickets != 0 || h.pins != 0
      || h.parked != 0)
    return;
  auto slot = h.slot;
  h.slot = npos32;
  commit();
  auto* link = &slots_[slot].holders;
  while (*link != npos32 && *link != index)
    link = &holders_[*link].next;
  if (*link == index)
    *link = h.next;
  h.next = hdr_->free_holder;
  hdr_->free_holder = index;
}

void store_impl::free_object_locked(uint32_t slot) noexcept {
  auto& s = slots_[slot];
  auto id = s.id;
  auto state = s.state;
  s.id = 0;
  commit();
  if (s.block != npos64 && state != slot_state::spilled)
    allocator{hdr_->alloc, data_}.deallocate(s.block);
  // A restoring object has both its new block and its file (counted in
  // bytes_spilled until the restore completes).
  if (state == slot_state::spilled || state == slot_state::restoring) {
    ::unlink(spill_path(id).c_str());
    hdr_->bytes_spilled -= s.size;
  }
  s.block = npos64;
  s.state = slot_state::free;
  s.io_process = npos32;
  s.holders = npos32;
  s.ref_count = 0;
  s.handles = 0;
  s.pins = 0;
  s.next_free = hdr_->free_slot;
  hdr_->free_slot = slot;
}

void store_impl::free_object_if_unreferenced_locked(uint32_t slot) noexcept {
  if (slots_[slot].id != 0 && slots_[slot].ref_count == 0)
    free_object_locked(slot);
}

object_ref store_impl::make_ref(uint32_t slot, uint32_t holder) noexcept {
  auto& s = slots_[slot];
  return object_ref{shared_from_this(),
                    slot,
                    holder,
                    object_id{s.id},
                    data_ + s.block + block_header_size,
                    s.size};
}

// -- allocation and spilling --------------------------------------------------

uint64_t store_impl::bytes_pinned_locked() const noexcept {
  uint64_t result = 0;
  for (uint32_t i = 0; i < hdr_->max_objects; ++i) {
    auto& s = slots_[i];
    if (s.id != 0 && s.state != slot_state::spilled && s.block != npos64
        && (s.state == slot_state::creating || s.handles > 0))
      result += s.block_size;
  }
  return result;
}

caf::error store_impl::store_full_locked(uint64_t payload,
                                         const std::string& why) {
  allocator alloc{hdr_->alloc, data_};
  return fail(errc::store_full, "store '", name_, "' cannot hold an object of ",
              payload, " bytes: ", why, " (capacity ", hdr_->alloc.capacity,
              " bytes, used ", hdr_->alloc.used, " bytes, pinned ",
              bytes_pinned_locked(), " bytes, largest free block ",
              alloc.largest_free_payload(), " bytes, spilled ",
              hdr_->bytes_spilled, " of ", hdr_->spill_limit,
              " bytes). Fix: drop handles no longer needed, let transfers "
              "complete, enable spilling or raise spill_limit, or create the "
              "store with a larger capacity");
}

caf::expected<std::pair<uint64_t, uint64_t>>
store_impl::allocate_locked(guard& g, uint64_t payload, uint32_t keep) {
  // Compared before rounding up to a block, which cannot overflow here: the
  // largest payload is one block spanning the whole data region.
  auto largest = hdr_->alloc.capacity - block_header_size;
  if (payload > largest)
    return fail(errc::store_full, "store '", name_,
                "' cannot hold an object of ", payload,
                " bytes: the object is larger than the store (capacity ",
                hdr_->alloc.capacity, " bytes, the largest object that fits ",
                largest, " bytes). Fix: create the store with a larger "
                "capacity or split the object");
  for (;;) {
    auto [offset, size] = allocator{hdr_->alloc, data_}.allocate(payload);
    if (offset != npos64)
      return std::pair{offset, size};
    if (hdr_->spilling == 0)
      return store_full_locked(payload, "spilling is off");
    // Least recently used sealed object that no live handle views.
    auto victim = npos32;
    bool over_bound = false;
    for (uint32_t i = 0; i < hdr_->max_objects; ++i) {
      auto& s = slots_[i];
      if (s.id == 0 || i == keep || s.state != slot_state::sealed
          || s.handles != 0 || s.ref_count == 0)
        continue;
      if (hdr_->bytes_spilled + s.size > hdr_->spill_limit) {
        over_bound = true;
        continue;
      }
      if (victim == npos32 || s.last_use < slots_[victim].last_use)
        victim = i;
    }
    if (victim == npos32)
      return store_full_locked(
        payload, over_bound ? "the spill directory's bound is reached"
                            : "no object can be spilled (all resident "
                              "objects are being created or held by live "
                              "handles)");
    if (auto err = spill_locked(g, victim))
      return err;
  }
}

std::string store_impl::spill_path(uint64_t id) const {
  return std::string{hdr_->spill_directory} + "/" + name_ + "."
         + std::to_string(id) + ".spill";
}

namespace {

/// Writes `size` bytes to `path` (through `path.tmp` and a rename, so a
/// crash never leaves a partial file under the final name).
caf::error write_spill_file(const std::string& store, const std::string& dir,
                            const std::string& path, const std::byte* data,
                            uint64_t size) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return fail(errc::spill_failed, "store '", store,
                  "': cannot create spill directory ", dir, ": ",
                  ec.message());
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  }
  // The directory may live in a shared place like /tmp: only write into a
  // real directory of our own that nobody else can write to.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)
      || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
    return fail(errc::spill_failed, "store '", store, "': spill directory ",
                dir,
                " is not a directory owned by this user and closed to "
                "others (mode 0700 expected); fix its owner and mode or "
                "choose another spill_directory");
  auto tmp = path + ".tmp";
  auto fd = ::open(tmp.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                   0600);
  if (fd < 0)
    return fail(errc::spill_failed, "store '", store, "': cannot create ", tmp,
                ": ", errno_text(errno));
  auto ok = write_all(fd, data, size);
  auto err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail(errc::spill_failed, "store '", store, "': cannot write ",
                size, " bytes to ", path, ": ", errno_text(err),
                "; free disk space or lower spill_limit");
  }
  return caf::none;
}

} // namespace

caf::error store_impl::spill_locked(guard& g, uint32_t slot) {
  // Take a handle for the duration of the I/O, so the object can neither be
  // freed nor spilled twice while the lock is released.
  auto holder = find_or_add_holder_locked(slot, self_);
  if (!holder)
    return std::move(holder.error());
  auto& s = slots_[slot];
  holders_[*holder].handles += 1;
  s.handles += 1;
  s.ref_count += 1;
  s.io_process = self_;
  commit();
  s.state = slot_state::spilling;
  auto id = s.id;
  auto size = s.size;
  auto block = s.block;
  auto path = spill_path(id);
  g.unlock();
  run_io_hook();
  auto err = write_spill_file(name_, hdr_->spill_directory, path,
                              data_ + block + block_header_size, size);
  if (!g.lock())
    return g.error();
  bool spilled = false;
  if (s.state == slot_state::spilling) {
    if (!err && s.handles == 1
        && hdr_->bytes_spilled + size <= hdr_->spill_limit) {
      s.state = slot_state::spilled;
      commit();
      s.block = npos64;
      hdr_->bytes_spilled += size;
      allocator{hdr_->alloc, data_}.deallocate(block);
      spilled = true;
    } else {
      // Someone got a handle meanwhile (or the bound filled up): the object
      // stays in memory and the file goes.
      s.state = slot_state::sealed;
    }
  }
  // Cleared after the state changed: a process that dies in between leaves
  // the object in a settled state or names itself for the reaper.
  commit();
  s.io_process = npos32;
  if (!spilled)
    ::unlink(path.c_str());
  drop_handle_locked(slot, *holder);
  return err;
}

caf::expected<std::pair<uint32_t, uint32_t>>
store_impl::acquire_locked(guard& g, object_id id) {
  for (;;) {
    auto* s = lookup_locked(id);
    if (s == nullptr)
      return fail(errc::object_not_found, "store '", name_,
                  "' has no object ", to_string(id),
                  " (never created, or freed when its last reference "
                  "dropped)");
    auto slot = static_cast<uint32_t>(s - slots_);
    switch (s->state) {
      case slot_state::creating:
        return fail(errc::object_not_sealed, describe(id),
                    " is still being written; get it after its builder "
                    "seals it");
      case slot_state::sealed:
      case slot_state::spilling: {
        auto holder = find_or_add_holder_locked(slot, self_);
        if (!holder)
          return std::move(holder.error());
        holders_[*holder].handles += 1;
        s->handles += 1;
        s->ref_count += 1;
        s->last_use = ++hdr_->tick;
        return std::pair{slot, *holder};
      }
      case slot_state::restoring: {
        // Another process (or thread) reads the file: wait for it, unless
        // it died doing so, or no attached process does it any more.
        auto io = s->io_process;
        if (io >= hdr_->max_processes || procs_[io].pid == 0) {
          roll_back_io_locked(slot);
          continue;
        }
        if (io != self_
            && !process_alive(procs_[io].pid, procs_[io].start_time)) {
          reap_process_locked(io);
          continue;
        }
        g.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds{100});
        if (!g.lock())
          return g.error();
        continue;
      }
      default:
        break;
    }
    // Spilled: allocate (perhaps spilling others, which releases the lock),
    // then read the file without the lock.
    auto size = s->size;
    auto block = allocate_locked(g, size, slot);
    if (!block)
      return std::move(block.error());
    auto [offset, block_size] = *block;
    s = &slots_[slot];
    if (s->id != static_cast<uint64_t>(id)
        || s->state != slot_state::spilled) {
      allocator{hdr_->alloc, data_}.deallocate(offset);
      continue; // changed while the lock was released: look again
    }
    auto holder = find_or_add_holder_locked(slot, self_);
    if (!holder) {
      allocator{hdr_->alloc, data_}.deallocate(offset);
      return std::move(holder.error());
    }
    holders_[*holder].handles += 1;
    s->handles += 1;
    s->ref_count += 1;
    s->block = offset;
    s->block_size = block_size;
    s->io_process = self_;
    commit();
    s->state = slot_state::restoring;
    auto path = spill_path(s->id);
    g.unlock();
    run_io_hook();
    auto fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    auto ok = fd >= 0
              && read_all(fd, data_ + offset + block_header_size, size);
    auto err = errno;
    if (fd >= 0)
      ::close(fd);
    if (!g.lock())
      return g.error();
    // The state changes first and `io_process` is cleared last (as in
    // spill_locked): a process that dies in between is named by the slot,
    // so the reaper settles the object instead of leaving it `restoring`
    // with nobody to finish it.
    if (ok) {
      s->state = slot_state::sealed;
      hdr_->bytes_spilled -= size;
      s->last_use = ++hdr_->tick;
      commit();
      s->io_process = npos32;
      ::unlink(path.c_str());
      return std::pair{slot, *holder};
    }
    s->state = slot_state::spilled;
    commit();
    s->block = npos64;
    allocator{hdr_->alloc, data_}.deallocate(offset);
    commit();
    s->io_process = npos32;
    drop_handle_locked(slot, *holder);
    return fail(errc::spill_failed, "store '", name_, "': cannot restore ",
                describe(id), " from ", path, ": ", errno_text(err));
  }
}

void store_impl::clean_spill_directory_locked() noexcept {
  // Keeps the files of spilled objects and those that live processes are
  // writing or reading right now; removes everything else of this store
  // (and nothing of other stores sharing the directory).
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator{
         std::filesystem::path{hdr_->spill_directory}, ec};
       !ec && it != std::filesystem::directory_iterator{}; it.increment(ec)) {
    auto parsed = parse_spill_file(it->path().filename().string(), name_);
    if (!parsed)
      continue;
    auto* s = lookup_locked(object_id{parsed->id});
    bool keep = false;
    if (s != nullptr && !parsed->tmp)
      keep = s->state == slot_state::spilled
             || s->state == slot_state::restoring
             || s->state == slot_state::spilling;
    else if (s != nullptr)
      keep = s->state == slot_state::spilling;
    if (!keep) {
      std::error_code ignored;
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

// -- objects ------------------------------------------------------------------

caf::expected<object_builder> store_impl::create(uint64_t size) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  if (hdr_->free_slot == npos32)
    return fail(errc::table_full, "store '", name_, "' holds ",
                hdr_->max_objects,
                " objects, its maximum; drop handles or create the store "
                "with a larger max_objects");
  auto block = allocate_locked(g, size, npos32);
  if (!block)
    return std::move(block.error());
  auto index = hdr_->free_slot;
  if (index == npos32) { // taken while a spill released the lock
    allocator{hdr_->alloc, data_}.deallocate(block->first);
    return fail(errc::table_full, "store '", name_, "' holds ",
                hdr_->max_objects,
                " objects, its maximum; drop handles or create the store "
                "with a larger max_objects");
  }
  auto& s = slots_[index];
  hdr_->free_slot = s.next_free;
  s.size = size;
  s.block = block->first;
  s.block_size = block->second;
  s.state = slot_state::creating;
  s.last_use = ++hdr_->tick;
  s.ref_count = 0;
  s.handles = 0;
  s.pins = 0;
  s.holders = npos32;
  s.next_free = npos32;
  s.io_process = npos32;
  auto id = (hdr_->next_sequence++ << hdr_->slot_bits) | index;
  commit();
  s.id = id;
  auto holder = find_or_add_holder_locked(index, self_);
  if (!holder) {
    free_object_locked(index);
    return std::move(holder.error());
  }
  holders_[*holder].handles = 1;
  s.handles = 1;
  s.ref_count = 1;
  if (auto hook = create_hook.load())
    hook();
  return object_builder{shared_from_this(),
                        index,
                        *holder,
                        object_id{id},
                        data_ + s.block + block_header_size,
                        size};
}

caf::expected<object_ref> store_impl::seal(uint32_t slot, uint32_t holder,
                                           object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto& s = slots_[slot];
  if (s.id != static_cast<uint64_t>(id) || s.state != slot_state::creating)
    return fail(errc::object_already_sealed, describe(id),
                " is not being created by this builder");
  s.state = slot_state::sealed;
  s.last_use = ++hdr_->tick;
  return make_ref(slot, holder);
}

void store_impl::abandon(uint32_t slot, uint32_t holder, object_id id) noexcept {
  if (slots_[slot].id != static_cast<uint64_t>(id))
    return;
  drop_handle(slot, holder);
}

caf::expected<object_ref> store_impl::get(object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto acquired = acquire_locked(g, id);
  if (!acquired)
    return std::move(acquired.error());
  return make_ref(acquired->first, acquired->second);
}

void store_impl::add_handle(uint32_t slot, uint32_t holder) noexcept {
  guard g{*this};
  if (!g.ok()) {
    log_warning("ferry.store: " + caf::to_string(g.error()));
    return;
  }
  holders_[holder].handles += 1;
  slots_[slot].handles += 1;
  slots_[slot].ref_count += 1;
}

void store_impl::drop_handle(uint32_t slot, uint32_t holder) noexcept {
  guard g{*this};
  if (!g.ok()) {
    log_warning("ferry.store: " + caf::to_string(g.error()));
    return;
  }
  drop_handle_locked(slot, holder);
}

void store_impl::drop_handle_locked(uint32_t slot, uint32_t holder) noexcept {
  auto& h = holders_[holder];
  auto& s = slots_[slot];
  if (h.slot != slot || h.handles == 0)
    return; // cannot happen while the handle lives; never underflow
  h.handles -= 1;
  s.handles -= 1;
  s.ref_count -= 1;
  release_holder_if_empty_locked(holder);
  free_object_if_unreferenced_locked(slot);
}

caf::expected<uint32_t> store_impl::park(uint32_t slot, object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto& s = slots_[slot];
  if (s.id != static_cast<uint64_t>(id))
    return fail(errc::object_not_found, describe(id), " no longer exists");
  auto holder = find_or_add_holder_locked(slot, self_);
  if (!holder)
    return std::move(holder.error());
  holders_[*holder].parked += 1;
  s.ref_count += 1;
  return *holder;
}

void store_impl::add_parked(uint32_t slot, uint32_t holder) noexcept {
  guard g{*this};
  if (!g.ok()) {
    log_warning("ferry.store: " + caf::to_string(g.error()));
    return;
  }
  holders_[holder].parked += 1;
  slots_[slot].ref_count += 1;
}

void store_impl::drop_parked(uint32_t slot, uint32_t holder) noexcept {
  guard g{*this};
  if (!g.ok()) {
    log_warning("ferry.store: " + caf::to_string(g.error()));
    return;
  }
  auto& h = holders_[holder];
  if (h.slot != slot || h.parked == 0)
    return; // cannot happen while the reference lives; never underflow
  h.parked -= 1;
  slots_[slot].ref_count -= 1;
  release_holder_if_empty_locked(holder);
  free_object_if_unreferenced_locked(slot);
}

uint64_t store_impl::ref_count(uint32_t slot, object_id id) {
  guard g{*this};
  if (!g.ok() || slots_[slot].id != static_cast<uint64_t>(id))
    return 0;
  return slots_[slot].ref_count;
}

// -- transfer and pins --------------------------------------------------------

caf::expected<transfer_ticket> store_impl::export_ticket(uint32_t slot,
                                                         object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto& s = slots_[slot];
  if (s.id != static_cast<uint64_t>(id))
    return fail(errc::object_not_found, describe(id), " no longer exists");
  auto index = hdr_->free_ticket;
  if (index == npos32)
    return fail(errc::table_full, "store '", name_, "': all ",
                hdr_->max_tickets,
                " transfer tickets are in transit; redeem or cancel some, or "
                "create the store with a larger max_tickets");
  auto holder = find_or_add_holder_locked(slot, self_);
  if (!holder)
    return std::move(holder.error());
  auto& t = tickets_[index];
  hdr_->free_ticket = t.next_free;
  t.object = s.id;
  t.slot = slot;
  t.process = self_;
  t.next_free = npos32;
  auto ticket_id = (hdr_->next_ticket_sequence++ << hdr_->ticket_bits) | index;
  commit();
  t.id = ticket_id;
  holders_[*holder].tickets += 1;
  s.ref_count += 1;
  return transfer_ticket{id, ticket_id};
}

namespace {

caf::error no_ticket(const std::string& name, const transfer_ticket& x) {
  return fail(errc::ticket_not_found, "store '", name, "' has no ",
              to_string(x),
              ": it was already redeemed or cancelled, or its exporting "
              "process died and was reaped");
}

} // namespace

caf::expected<object_ref> store_impl::redeem(const transfer_ticket& ticket) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto valid = [&] {
    auto index = ticket.id & ((uint64_t{1} << hdr_->ticket_bits) - 1);
    return ticket.id != 0 && index < hdr_->max_tickets
           && tickets_[index].id == ticket.id
           && tickets_[index].object == static_cast<uint64_t>(ticket.object);
  };
  if (!valid())
    return no_ticket(name_, ticket);
  // Take a handle first (restoring the object if needed, which may release
  // the lock), then check the ticket again and let the handle replace it.
  auto acquired = acquire_locked(g, ticket.object);
  if (!acquired)
    return std::move(acquired.error());
  auto [slot, importer] = *acquired;
  if (!valid()) { // cancelled while the lock was released
    drop_handle_locked(slot, importer);
    return no_ticket(name_, ticket);
  }
  auto index = static_cast<uint32_t>(ticket.id
                                     & ((uint64_t{1} << hdr_->ticket_bits) - 1));
  auto& t = tickets_[index];
  auto exporter = t.process;
  t.id = 0;
  commit();
  t.next_free = hdr_->free_ticket;
  hdr_->free_ticket = index;
  slots_[slot].ref_count -= 1;
  if (auto from = find_holder_locked(slot, exporter); from != npos32) {
    if (holders_[from].tickets > 0)
      holders_[from].tickets -= 1;
    release_holder_if_empty_locked(from);
  }
  return make_ref(slot, importer);
}

caf::error store_impl::cancel(const transfer_ticket& ticket) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto index = ticket.id & ((uint64_t{1} << hdr_->ticket_bits) - 1);
  if (ticket.id == 0 || index >= hdr_->max_tickets
      || tickets_[index].id != ticket.id
      || tickets_[index].object != static_cast<uint64_t>(ticket.object))
    return no_ticket(name_, ticket);
  auto& t = tickets_[index];
  auto slot = t.slot;
  auto exporter = t.process;
  t.id = 0;
  commit();
  t.next_free = hdr_->free_ticket;
  hdr_->free_ticket = static_cast<uint32_t>(index);
  slots_[slot].ref_count -= 1;
  if (auto from = find_holder_locked(slot, exporter); from != npos32) {
    if (holders_[from].tickets > 0)
      holders_[from].tickets -= 1;
    release_holder_if_empty_locked(from);
  }
  free_object_if_unreferenced_locked(slot);
  return caf::none;
}

caf::expected<bool> store_impl::pin(uint32_t slot, object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto& s = slots_[slot];
  if (s.id != static_cast<uint64_t>(id))
    return fail(errc::object_not_found, describe(id), " no longer exists");
  auto holder = find_or_add_holder_locked(slot, self_);
  if (!holder)
    return std::move(holder.error());
  auto& h = holders_[*holder];
  if (h.pins != 0)
    return false;
  h.pins = 1;
  s.pins += 1;
  s.ref_count += 1;
  return true;
}

caf::error store_impl::unpin(object_id id) {
  guard g{*this};
  if (!g.ok())
    return g.error();
  auto* s = lookup_locked(id);
  if (s == nullptr)
    return fail(errc::object_not_found, "store '", name_, "' has no object ",
                to_string(id));
  auto slot = static_cast<uint32_t>(s - slots_);
  auto holder = find_holder_locked(slot, self_);
  if (holder == npos32 || holders_[holder].pins == 0)
    return fail(errc::not_pinned, describe(id), " is not pinned by process ",
                pid_);
  holders_[holder].pins = 0;
  s->pins -= 1;
  s->ref_count -= 1;
  release_holder_if_empty_locked(holder);
  free_object_if_unreferenced_locked(slot);
  return caf::none;
}

// -- reaping and recovery -----------------------------------------------------

void store_impl::reap_process_locked(uint32_t process) noexcept {
  // Spill I/O the process left half done (or finished, if it died before
  // clearing `io_process`): settle it before its handles go.
  for (uint32_t i = 0; i < hdr_->max_objects; ++i)
    if (slots_[i].id != 0 && slots_[i].io_process == process)
      roll_back_io_locked(i);
  std::set<uint32_t> touched;
  for (uint32_t i = 0; i < hdr_->max_tickets; ++i) {
    auto& t = tickets_[i];
    if (t.id == 0 || t.process != process)
      continue;
    t.id = 0;
    commit();
    t.next_free = hdr_->free_ticket;
    hdr_->free_ticket = i;
    slots_[t.slot].ref_count -= 1;
    touched.insert(t.slot);
  }
  for (uint32_t i = 0; i < hdr_->max_holders; ++i) {
    auto& h = holders_[i];
    if (h.slot == npos32 || h.process != process)
      continue;
    auto& s = slots_[h.slot];
    s.handles -= h.handles;
    s.pins -= h.pins;
    s.ref_count -= h.handles + h.pins + h.parked;
    touched.insert(h.slot);
    h.handles = 0;
    h.tickets = 0;
    h.pins = 0;
    h.parked = 0;
    release_holder_if_empty_locked(i);
  }
  for (auto slot : touched)
    free_object_if_unreferenced_locked(slot);
  procs_[process].pid = 0;
  procs_[process].start_time = 0;
}

void store_impl::roll_back_io_locked(uint32_t slot) noexcept {
  auto& s = slots_[slot];
  if (s.state == slot_state::spilling) {
    ::unlink((spill_path(s.id) + ".tmp").c_str());
    ::unlink(spill_path(s.id).c_str());
    s.state = slot_state::sealed;
  } else if (s.state == slot_state::restoring) {
    auto block = s.block;
    s.state = slot_state::spilled;
    commit();
    s.block = npos64;
    if (block != npos64)
      allocator{hdr_->alloc, data_}.deallocate(block);
  }
  commit();
  s.io_process = npos32;
}

void store_impl::unregister_locked() noexcept {
  if (self_ == npos32 || procs_[self_].pid != pid_)
    return;
  reap_process_locked(self_);
  self_ = npos32;
}

caf::expected<size_t> store_impl::reap() {
  struct candidate {
    uint32_t index;
    int32_t pid;
    uint64_t start_time;
  };
  std::vector<candidate> candidates;
  {
    guard g{*this};
    if (!g.ok())
      return g.error();
    for (uint32_t i = 0; i < hdr_->max_processes; ++i)
      if (procs_[i].pid != 0 && i != self_)
        candidates.push_back({i, procs_[i].pid, procs_[i].start_time});
  }
  // Check liveness without the lock (it reads /proc).
  std::erase_if(candidates, [](const candidate& x) {
    return process_alive(x.pid, x.start_time);
  });
  if (candidates.empty())
    return size_t{0};
  guard g{*this};
  if (!g.ok())
    return g.error();
  size_t reaped = 0;
  for (auto& x : candidates) {
    auto& p = procs_[x.index];
    if (p.pid == x.pid && p.start_time == x.start_time) {
      reap_process_locked(x.index);
      ++reaped;
    }
  }
  return reaped;
}

void store_impl::recover_locked() noexcept {
  auto& h = *hdr_;
  // 1. Drop primary entries that point to nothing.
  for (uint32_t i = 0; i < h.max_tickets; ++i) {
    auto& t = tickets_[i];
    if (t.id != 0
        && (t.slot >= h.max_objects || slots_[t.slot].id != t.object
            || t.process >= h.max_processes || procs_[t.process].pid == 0))
      t.id = 0;
  }
  for (uint32_t i = 0; i < h.max_holders; ++i) {
    auto& x = holders_[i];
    if (x.slot != npos32
        && (x.slot >= h.max_objects || slots_[x.slot].id == 0
            || x.process >= h.max_processes || procs_[x.process].pid == 0))
      x.slot = npos32;
  }
  // 2. Free list of holders, then per-object lists and totals.
  h.free_holder = npos32;
  for (uint32_t i = h.max_holders; i-- > 0;) {
    if (holders_[i].slot == npos32) {
      holders_[i].next = h.free_holder;
      h.free_holder = i;
    }
  }
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots_[i];
    s.holders = npos32;
    s.ref_count = 0;
    s.handles = 0;
    s.pins = 0;
    if (s.state == slot_state::spilled)
      s.block = npos64; // a restore that died before its state change
  }
  for (uint32_t i = 0; i < h.max_holders; ++i) {
    auto& x = holders_[i];
    if (x.slot == npos32)
      continue;
    auto& s = slots_[x.slot];
    x.tickets = 0;
    x.next = s.holders;
    s.holders = i;
    s.handles += x.handles;
    s.pins += x.pins;
    s.ref_count += x.handles + x.pins + x.parked;
  }
  for (uint32_t i = 0; i < h.max_tickets; ++i) {
    auto& t = tickets_[i];
    if (t.id == 0)
      continue;
    auto holder = find_or_add_holder_locked(t.slot, t.process);
    if (!holder) {
      t.id = 0;
      continue;
    }
    holders_[*holder].tickets += 1;
    slots_[t.slot].ref_count += 1;
  }
  for (uint32_t i = 0; i < h.max_holders; ++i)
    release_holder_if_empty_locked(i);
  // 3. Objects nobody references are freed (e.g. a create that died before
  //    its holder existed); the allocator is rebuilt below, so only the
  //    marker and spill file are handled here.
  h.bytes_spilled = 0;
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots_[i];
    if (s.id != 0 && s.ref_count == 0) {
      if (s.state == slot_state::spilled)
        ::unlink(spill_path(s.id).c_str());
      s.id = 0;
    }
    if (s.id == 0) {
      s.state = slot_state::free;
      s.block = npos64;
      continue;
    }
    // A restoring object has both its file and its new block (I/O of a
    // live process, or of a dead or unknown one that step 6 reverts).
    if (s.state == slot_state::spilled || s.state == slot_state::restoring)
      h.bytes_spilled += s.size;
    if (s.state != slot_state::spilled && s.block != npos64)
      used.emplace_back(s.block, s.block_size);
  }
  // 4. Free lists of slots and tickets.
  h.free_slot = npos32;
  for (uint32_t i = h.max_objects; i-- > 0;) {
    if (slots_[i].id == 0) {
      slots_[i].next_free = h.free_slot;
      h.free_slot = i;
    }
  }
  h.free_ticket = npos32;
  for (uint32_t i = h.max_tickets; i-- > 0;) {
    if (tickets_[i].id == 0) {
      tickets_[i].next_free = h.free_ticket;
      h.free_ticket = i;
    }
  }
  // 5. The allocator, from the blocks of resident objects.
  allocator{h.alloc, data_}.rebuild(std::move(used));
  clean_spill_directory_locked();
  h.recoveries += 1;
  // 6. Spill I/O that names no attached process has nobody to finish it
  //    (left by a build that cleared `io_process` before the state change):
  //    roll it back before any count drops, so that freeing the object
  //    sees a settled state. Then the owner that died (and any other dead
  //    process) gives up its counts, rolling back its own I/O first.
  for (uint32_t i = 0; i < h.max_objects; ++i) {
    auto& s = slots_[i];
    if (s.id != 0
        && (s.state == slot_state::spilling
            || s.state == slot_state::restoring)
        && (s.io_process >= h.max_processes
            || procs_[s.io_process].pid == 0))
      roll_back_io_locked(i);
  }
  for (uint32_t i = 0; i < h.max_processes; ++i)
    if (procs_[i].pid != 0 && i != self_
        && !process_alive(procs_[i].pid, procs_[i].start_time))
      reap_process_locked(i);
}

// -- introspection ------------------------------------------------------------

caf::expected<ferry::store::memory_summary> store_impl::summary() {
  ferry::store::memory_summary result;
  std::vector<std::pair<int32_t, uint64_t>> starts;
  {
    guard g{*this};
    if (!g.ok())
      return g.error();
    result.name = name_;
    result.capacity = hdr_->alloc.capacity;
    result.bytes_used = hdr_->alloc.used;
    result.bytes_pinned = bytes_pinned_locked();
    result.bytes_spilled = hdr_->bytes_spilled;
    result.spill_limit = hdr_->spill_limit;
    result.largest_free_block
      = allocator{hdr_->alloc, data_}.largest_free_payload();
    result.recoveries = hdr_->recoveries;
    for (uint32_t i = 0; i < hdr_->max_objects; ++i) {
      auto& s = slots_[i];
      if (s.id == 0)
        continue;
      object_info info;
      info.id = object_id{s.id};
      info.size = s.size;
      info.ref_count = s.ref_count;
      info.sealed = s.state != slot_state::creating;
      info.pinned = s.pins > 0;
      info.spilled = s.state == slot_state::spilled
                     || s.state == slot_state::restoring;
      for (auto j = s.holders; j != npos32; j = holders_[j].next) {
        auto& x = holders_[j];
        info.holders.push_back(
          {procs_[x.process].pid, x.handles, x.tickets, x.pins, x.parked});
      }
      std::sort(info.holders.begin(), info.holders.end(),
                [](auto& a, auto& b) { return a.pid < b.pid; });
      result.objects.push_back(std::move(info));
    }
    for (uint32_t i = 0; i < hdr_->max_processes; ++i)
      if (procs_[i].pid != 0)
        starts.emplace_back(procs_[i].pid, procs_[i].start_time);
  }
  std::sort(result.objects.begin(), result.objects.end(),
            [](auto& a, auto& b) { return a.id < b.id; });
  // Liveness reads /proc: done without the lock.
  for (auto [pid, start] : starts)
    result.processes.push_back({pid, process_alive(pid, start)});
  return result;
}

} // namespace ferry::store::detail
