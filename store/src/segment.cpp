// Creating, opening and removing a store's segment; see segment.hpp.
#include "segment.hpp"

#include "allocator.hpp"
#include "fail.hpp"
#include "spill_file.hpp"

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <thread>

namespace bip = boost::interprocess;

namespace ferry::store::detail {

namespace {

using namespace std::literals;

uint64_t round_up(uint64_t x, uint64_t to) noexcept {
  return (x + to - 1) / to * to;
}

uint32_t bits_for(uint32_t n) noexcept {
  uint32_t bits = 0;
  while ((uint64_t{1} << bits) < n)
    ++bits;
  return bits;
}

/// How often `open` starts over when the segment it waits on loses its
/// name (its creator failed and removed it, or it was replaced).
constexpr int max_open_attempts = 4;

} // namespace

caf::error segment::open(const store_config& cfg,
                         const process_identity& self) {
  return open(cfg, self, 1);
}

caf::error segment::open(const store_config& cfg, const process_identity& self,
                         int attempt) {
  name_ = cfg.name;
  if (!cfg.open_only) {
    bool created = false;
    try {
      bip::permissions perms;
      perms.set_permissions(0600);
      shm_ = bip::shared_memory_object(bip::create_only, name_.c_str(),
                                       bip::read_write, perms);
      created = true;
    } catch (const bip::interprocess_exception& ex) {
      if (ex.get_error_code() != bip::already_exists_error)
        return fail(errc::segment_unavailable, "store '", name_,
                    "': cannot create shared memory segment /dev/shm/", name_,
                    ": ", ex.what());
    }
    if (created)
      return init(cfg, self);
  }
  return open_existing(cfg, self, attempt);
}

caf::error segment::init(const store_config& cfg,
                         const process_identity& self) {
  auto max_holders = 2 * cfg.max_objects + cfg.max_tickets;
  auto capacity = cfg.capacity / block_align * block_align;
  auto header_size = round_up(sizeof(segment_header), 64);
  auto process_offset = header_size;
  auto slot_offset = round_up(
    process_offset + uint64_t{cfg.max_processes} * sizeof(process_entry), 64);
  auto holder_offset =
    round_up(slot_offset + uint64_t{cfg.max_objects} * sizeof(slot_entry), 64);
  auto ticket_offset =
    round_up(holder_offset + uint64_t{max_holders} * sizeof(holder_entry), 64);
  auto data_offset = round_up(
    ticket_offset + uint64_t{cfg.max_tickets} * sizeof(ticket_entry), 4096);
  auto segment_size = data_offset + capacity;
  try {
    shm_.truncate(static_cast<bip::offset_t>(segment_size));
  } catch (const bip::interprocess_exception& ex) {
    bip::shared_memory_object::remove(name_.c_str());
    return fail(errc::segment_unavailable, "store '", name_,
                "': cannot size "
                "the segment to ",
                segment_size, " bytes: ", ex.what());
  }
  if (auto err = map()) {
    bip::shared_memory_object::remove(name_.c_str());
    return err;
  }
  // Say who creates the segment before the slow part, then allocate and
  // map all pages, fill in the header, and publish it by writing the magic
  // last.
  auto* h = new (base_) segment_header{};
  h->creator_start_time = self.start_time;
  h->creator_pid_namespace = self.pid_namespace;
  commit();
  h->creator_pid = self.pid;
  if (cfg.prefault) {
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
  populate(cfg.prefault);
  h->version = layout_version;
  h->header_size = sizeof(segment_header);
  h->entry_sizes = entry_sizes();
  std::random_device rd;
  h->token = (uint64_t{rd()} << 32 | rd()) ^
             static_cast<uint64_t>(
               std::chrono::steady_clock::now().time_since_epoch().count());
  if (h->token == 0)
    h->token = 1;
  h->segment_size = segment_size;
  h->process_offset = process_offset;
  h->slot_offset = slot_offset;
  h->holder_offset = holder_offset;
  h->ticket_offset = ticket_offset;
  h->data_offset = data_offset;
  h->max_processes = cfg.max_processes;
  h->max_objects = cfg.max_objects;
  h->max_holders = max_holders;
  h->max_tickets = cfg.max_tickets;
  h->slot_bits = bits_for(cfg.max_objects);
  h->ticket_bits = bits_for(cfg.max_tickets);
  h->spill_limit = cfg.spill_limit;
  h->spilling = cfg.spilling ? 1 : 0;
  h->persistent = cfg.persistent ? 1 : 0;
  std::snprintf(h->name, max_name, "%s", name_.c_str());
  auto dir = cfg.spill_directory.empty()
               ? store_config::default_spill_directory()
               : cfg.spill_directory;
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
  auto* procs = reinterpret_cast<process_entry*>(base_ + process_offset);
  auto* slots = reinterpret_cast<slot_entry*>(base_ + slot_offset);
  auto* holders = reinterpret_cast<holder_entry*>(base_ + holder_offset);
  auto* tickets = reinterpret_cast<ticket_entry*>(base_ + ticket_offset);
  auto* data = base_ + data_offset;
  for (uint32_t i = 0; i < h->max_processes; ++i)
    procs[i] = process_entry{};
  for (uint32_t i = 0; i < h->max_objects; ++i) {
    slots[i] = slot_entry{};
    slots[i].block = npos64;
    slots[i].holders = npos32;
    slots[i].io_process = npos32;
    slots[i].next_free = i + 1 < h->max_objects ? i + 1 : npos32;
  }
  for (uint32_t i = 0; i < max_holders; ++i) {
    holders[i] = holder_entry{};
    holders[i].slot = npos32;
    holders[i].next = i + 1 < max_holders ? i + 1 : npos32;
  }
  for (uint32_t i = 0; i < h->max_tickets; ++i) {
    tickets[i] = ticket_entry{};
    tickets[i].next_free = i + 1 < h->max_tickets ? i + 1 : npos32;
  }
  h->free_slot = 0;
  h->free_holder = 0;
  h->free_ticket = 0;
  allocator{h->alloc, data}.init(capacity);
  h->magic.store(segment_magic, std::memory_order_release);
  return caf::none;
}

caf::error segment::open_existing(const store_config& cfg,
                                  const process_identity& self, int attempt) {
  // Open an existing segment; wait (briefly) for its creator to finish.
  try {
    shm_ =
      bip::shared_memory_object(bip::open_only, name_.c_str(), bip::read_write);
  } catch (const bip::interprocess_exception& ex) {
    // The name went between our create and this open: the store's last
    // process retired it. Start over, which creates it anew.
    if (!cfg.open_only && ex.get_error_code() == bip::not_found_error &&
        attempt < max_open_attempts)
      return open(cfg, self, attempt + 1);
    return fail(errc::segment_unavailable, "store '", name_,
                "': cannot open shared memory segment /dev/shm/", name_, ": ",
                ex.what(),
                cfg.open_only ? "; is a store with this name running?" : "");
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
    if (shm_.get_size(size) &&
        static_cast<uint64_t>(size) >= sizeof(segment_header)) {
      if (auto err = map())
        return err;
      auto* h = reinterpret_cast<segment_header*>(base_);
      if (h->magic.load(std::memory_order_acquire) == segment_magic)
        break;
      creator = *static_cast<volatile int32_t*>(&h->creator_pid);
      start = *static_cast<volatile uint64_t*>(&h->creator_start_time);
      creator_ns = *static_cast<volatile uint64_t*>(&h->creator_pid_namespace);
      region_ = bip::mapped_region{};
      base_ = nullptr;
    }
    if (!current()) {
      shm_ = bip::shared_memory_object{};
      if (attempt < max_open_attempts)
        return open(cfg, self, attempt + 1);
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the segment was removed or replaced ", attempt,
                  " times while this process waited for its creator to "
                  "initialize it (the creating process failed, e.g. with "
                  "/dev/shm full, or processes keep removing the store); fix "
                  "what the creating process reported and attach again");
    }
    if (creator != 0 && !process_alive(creator, start)) {
      // A creator in another PID namespace looks dead from here.
      if (auto err = check_pid_namespace(name_, creator_ns, self.pid_namespace))
        return err;
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the process that created the segment (pid ", creator,
                  ") died before initializing it; remove it with "
                  "`ferry-store remove ",
                  name_, "`");
    }
    if (creator == 0 && std::chrono::steady_clock::now() > deadline)
      return fail(errc::segment_unavailable, "store '", name_,
                  "': the segment exists but was never initialized (did its "
                  "creator die?); remove it with `ferry-store remove ",
                  name_, "`");
    std::this_thread::sleep_for(1ms);
  }
  auto* h = reinterpret_cast<segment_header*>(base_);
  if (h->version != layout_version || h->header_size != sizeof(segment_header))
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
                "with `ferry-store remove ",
                name_, "`");
  if (h->segment_size != region_.get_size())
    return fail(errc::incompatible_segment, "store '", name_,
                "': segment header says ", h->segment_size,
                " bytes but the segment has ", region_.get_size(),
                " bytes (resized or damaged); remove it with "
                "`ferry-store remove ",
                name_, "`");
  // Pids and start times name processes only within one PID namespace: a
  // process of another one would take every process here for dead.
  if (auto err = check_pid_namespace(name_, h->creator_pid_namespace,
                                     self.pid_namespace))
    return err;
  hdr_ = h;
  populate(cfg.prefault);
  return caf::none;
}

caf::error segment::map() {
  try {
    region_ = bip::mapped_region(shm_, bip::read_write);
  } catch (const bip::interprocess_exception& ex) {
    return fail(errc::segment_unavailable, "store '", name_,
                "': cannot map the segment: ", ex.what());
  }
  base_ = static_cast<std::byte*>(region_.get_address());
  return caf::none;
}

void segment::populate(bool prefault) noexcept {
  if (prefault) {
    // Populate this process's page tables, so that the first write to a
    // block costs no page fault. Best effort (needs Linux 5.14).
    ::madvise(region_.get_address(), region_.get_size(), MADV_POPULATE_WRITE);
  }
}

int back_pages(std::byte* first, uint64_t size) noexcept {
  if (size == 0)
    return 0;
  auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(first) / page * page;
  auto end = reinterpret_cast<uintptr_t>(first) + size;
  if (::madvise(reinterpret_cast<void*>(begin), end - begin,
                MADV_POPULATE_WRITE) == 0)
    return 0;
  switch (errno) {
  case EFAULT: // a write would have raised SIGBUS: tmpfs is full
    return ENOSPC;
  case ENOMEM:
    return ENOMEM;
  default: // EINVAL: not supported by this kernel
    return 0;
  }
}

void segment::retire_locked() noexcept {
  if (hdr_ == nullptr)
    return;
  hdr_->retired = 1;
  commit();
  // Under the store lock no other process can remove the name or create a
  // segment under it while it names this one, so this unlinks this one.
  if (current())
    bip::shared_memory_object::remove(name_.c_str());
}

bool segment::current() const noexcept {
  struct stat mine {};
  struct stat named {};
  auto path = "/dev/shm/" + name_;
  return ::fstat(shm_.get_mapping_handle().handle, &mine) == 0 &&
         ::stat(path.c_str(), &named) == 0 && mine.st_ino == named.st_ino &&
         mine.st_dev == named.st_dev;
}

caf::error segment::remove(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos)
    return fail(errc::invalid_config, "store name '", name,
                "' is not valid: use 1 to 200 characters without '/'");
  // Delete the spill files first (their directory is in the header).
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_only);
    bip::mapped_region region(shm, bip::read_only);
    if (region.get_size() >= sizeof(segment_header)) {
      auto* h = static_cast<const segment_header*>(region.get_address());
      if (h->magic.load(std::memory_order_acquire) == segment_magic) {
        std::string dir(h->spill_directory,
                        strnlen(h->spill_directory, max_path));
        // Only this store's files: the directory may be shared with a
        // store named `<name>.<more>`.
        remove_spill_files(dir, name, [](const spill_file&) { return false; });
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

} // namespace ferry::store::detail
