// The object protocol of an attached store; see store_impl.hpp.
//
// Invariants, in prose:
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
#include "store_impl.hpp"

#include "allocator.hpp"
#include "fail.hpp"
#include "guard.hpp"
#include "process_table.hpp"
#include "spill.hpp"
#include "summary.hpp"
#include "ferry/store/detail/thread_safety.hpp"

#include "ferry/store/log.hpp"

#include <atomic>
#include <map>
#include <utility>
#include <vector>

namespace ferry::store::detail {

namespace {

/// How often `attach` starts over when the segment it opened was retired
/// before it could register.
constexpr int max_attach_attempts = 8;

std::atomic<void (*)()> create_hook{nullptr};

mutex registry_mtx;

std::map<std::string, std::weak_ptr<store_impl>>& registry()
  FERRY_REQUIRES(registry_mtx) {
  static std::map<std::string, std::weak_ptr<store_impl>> instance;
  return instance;
}

caf::error no_ticket(const std::string& name, const transfer_ticket& x) {
  return fail(errc::ticket_not_found, "store '", name, "' has no ",
              to_string(x),
              ": it was already redeemed or cancelled, or its exporting "
              "process died and was reaped");
}

/// Runs `update` under the store lock, for the count updates that cannot
/// report an error (copies and destructors of handles and parked
/// references): when the lock cannot be taken, it logs why and skips it.
template <class Update>
void update_or_warn(object_tables& tables, uint32_t self,
                    Update update) noexcept {
  guard g{tables, self};
  if (!g.ok()) {
    log_warning("ferry.store: " + caf::to_string(g.error()));
    return;
  }
  update();
}

/// Takes the lock and calls `add(holder)` with this process's holder of
/// object `id` (in `slot`), added if the process had none: how `park` and
/// `pin` count a new reference. Fails when the lock cannot be taken, the
/// object is gone or the holder table is full.
template <class Add>
auto add_reference(object_tables& tables, uint32_t self, uint32_t slot,
                   object_id id, Add add)
  -> caf::expected<decltype(add(uint32_t{}))> {
  guard g{tables, self};
  if (!g.ok())
    return g.error();
  auto holder = tables.holder_of_live_locked(slot, id, self);
  if (!holder)
    return std::move(holder.error());
  return add(*holder);
}

} // namespace

// -- attach / detach ----------------------------------------------------------

store_impl::store_impl(attach_tag, const store_config& cfg)
  : cfg_(cfg),
    name_(cfg.name),
    identity_(process_identity::self()) {
  // nop
}

caf::expected<std::shared_ptr<store_impl>>
store_impl::attach(const store_config& cfg) {
  if (cfg.name.empty() || cfg.name.size() > 200 ||
      cfg.name.find('/') != std::string::npos)
    return fail(errc::invalid_config, "store name '", cfg.name,
                "' is not valid: use 1 to 200 characters without '/'");
  if (cfg.capacity < min_block_size)
    return fail(errc::segment_too_small, "store '", cfg.name, "': capacity ",
                cfg.capacity, " bytes is too small; use at least ",
                min_block_size, " bytes");
  if (cfg.capacity > max_capacity)
    return fail(errc::invalid_config, "store '", cfg.name, "': capacity ",
                cfg.capacity, " bytes is too large; use at most ", max_capacity,
                " bytes (128 PiB)");
  if (cfg.max_objects == 0 || cfg.max_objects > (1u << 24) ||
      cfg.max_processes == 0 || cfg.max_processes > 65536 ||
      cfg.max_tickets == 0 || cfg.max_tickets > (1u << 24))
    return fail(errc::invalid_config, "store '", cfg.name,
                "': max_objects and max_tickets must be in 1..16777216, "
                "max_processes in 1..65536");
  lock_guard lock{registry_mtx};
  auto& reg = registry();
  if (auto i = reg.find(cfg.name); i != reg.end()) {
    // Share the attachment, unless its segment was removed since (then
    // this attach creates or opens the segment now under that name).
    if (auto existing = i->second.lock(); existing && existing->current())
      return existing;
  }
  // A segment retired by its last process between our open and our
  // registration is gone for good: start over, which creates a new one
  // (or opens the one another process created meanwhile).
  std::shared_ptr<store_impl> impl;
  caf::expected<uint32_t> self{npos32};
  for (int attempt = 1;; ++attempt) {
    impl = std::make_shared<store_impl>(attach_tag{}, cfg);
    if (auto err = impl->segment_.open(cfg, impl->identity_))
      return err;
    impl->tables_ = object_tables{impl->segment_.header(),
                                  impl->segment_.base(), impl->name_};
    self = register_process(impl->tables_, impl->identity_);
    if (!self || *self != npos32)
      break;
    {
      // Its last process may have died before removing the name.
      guard g{impl->tables_, npos32};
      if (g.ok())
        impl->segment_.retire_locked();
    }
    if (attempt == max_attach_attempts)
      return fail(errc::segment_unavailable, "store '", cfg.name,
                  "': the segment was retired by its last process ", attempt,
                  " times while this process attached (processes keep "
                  "leaving the store as this one joins); attach again");
  }
  if (!self)
    return std::move(self.error());
  impl->self_ = *self;
  auto reaped = impl->reap();
  if (!reaped)
    return std::move(reaped.error());
  impl->reaped_at_attach_ = *reaped;
  impl->reaper_.start(cfg.reaper_interval, [ptr = impl.get()] {
    // A reap that cannot take the lock is retried on the next tick; the
    // calls that need the lock report that failure themselves.
    static_cast<void>(ptr->reap());
  });
  reg[cfg.name] = impl;
  return impl;
}

std::shared_ptr<store_impl> store_impl::find_by_token(uint64_t token) {
  lock_guard lock{registry_mtx};
  for (auto& [key, weak] : registry())
    if (auto impl = weak.lock(); impl && impl->token() == token)
      return impl;
  return nullptr;
}

store_impl::~store_impl() {
  reaper_.stop();
  if (tables_.hdr != nullptr && self_ != npos32) {
    guard g{tables_, self_};
    if (g.ok()) {
      unregister_locked();
      retire_if_unused_locked();
    }
  }
}

void store_impl::retire_if_unused_locked() noexcept {
  if (tables_.hdr->persistent != 0)
    return;
  std::vector<uint32_t> dead;
  for (uint32_t i = 0; i < tables_.hdr->max_processes; ++i) {
    auto& p = tables_.procs[i];
    if (p.pid == 0)
      continue;
    if (process_alive(p.pid, p.start_time))
      return;
    dead.push_back(i);
  }
  for (auto i : dead)
    reap_process_locked(tables_, i);
  segment_.retire_locked();
}

void store_impl::unregister_locked() noexcept {
  if (self_ == npos32 || tables_.procs[self_].pid != identity_.pid)
    return;
  reap_process_locked(tables_, self_);
  self_ = npos32;
}

caf::error store_impl::remove(const std::string& name) {
  return segment::remove(name);
}

caf::expected<size_t> store_impl::reap() {
  return reap_dead_processes(tables_, self_);
}

caf::expected<ferry::store::memory_summary> store_impl::summary() {
  return summarize(tables_, self_);
}

caf::expected<ferry::store::store_totals> store_impl::totals() {
  return detail::totals(tables_, self_);
}

void store_impl::set_create_hook(void (*hook)()) noexcept {
  create_hook.store(hook);
}

void store_impl::set_io_hook(void (*hook)()) noexcept {
  set_spill_io_hook(hook);
}

// -- objects ------------------------------------------------------------------

object_ref store_impl::make_ref(uint32_t slot, uint32_t holder) noexcept {
  auto& s = tables_.slots[slot];
  return object_ref{counted_hold{
    counted_hold::kind::handle, shared_from_this(), slot, holder,
    object_id{s.id}, tables_.data + s.block + block_header_size, s.size}};
}

caf::expected<object_builder> store_impl::create(uint64_t size) {
  auto builder = create_locked(size);
  if (!builder)
    return builder;
  // Outside the lock: allocating fresh pages of a large object takes time.
  if (auto rc = back_pages(builder->bytes().data(), size); rc != 0)
    return fail(errc::store_full, "store '", name_, "': /dev/shm cannot hold ",
                "the ", size, " bytes of a new object (", errno_text(rc),
                "), although the store's capacity has room; free space in "
                "/dev/shm, lower the store's capacity to what /dev/shm holds, "
                "or turn prefault on to find this out when the store is "
                "created");
  return builder;
}

caf::expected<object_builder> store_impl::create_locked(uint64_t size) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto* hdr = tables_.hdr;
  auto table_full = [&] {
    return fail(errc::table_full, "store '", name_, "' holds ",
                hdr->max_objects,
                " objects, its maximum; drop handles or create the store "
                "with a larger max_objects");
  };
  if (hdr->free_slot == npos32)
    return table_full();
  auto block = allocate_locked(g, tables_, self_, size, npos32);
  if (!block)
    return std::move(block.error());
  auto index = hdr->free_slot;
  if (index == npos32) { // taken while a spill released the lock
    allocator{hdr->alloc, tables_.data}.deallocate(block->first);
    return table_full();
  }
  auto& s = tables_.slots[index];
  hdr->free_slot = s.next_free;
  s.size = size;
  s.block = block->first;
  s.block_size = block->second;
  s.state = slot_state::creating;
  s.last_use = ++hdr->tick;
  s.ref_count = 0;
  s.handles = 0;
  s.pins = 0;
  s.holders = npos32;
  s.next_free = npos32;
  s.io_process = npos32;
  auto id = (hdr->next_sequence++ << hdr->slot_bits) | index;
  commit();
  s.id = id;
  auto holder = tables_.find_or_add_holder_locked(index, self_);
  if (!holder) {
    tables_.free_object_locked(index);
    return std::move(holder.error());
  }
  tables_.holders[*holder].handles = 1;
  s.handles = 1;
  s.ref_count = 1;
  if (auto hook = create_hook.load())
    hook();
  return object_builder{counted_hold{
    counted_hold::kind::builder, shared_from_this(), index, *holder,
    object_id{id}, tables_.data + s.block + block_header_size, size}};
}

caf::expected<object_ref> store_impl::seal(uint32_t slot, uint32_t holder,
                                           object_id id) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto& s = tables_.slots[slot];
  if (s.id != static_cast<uint64_t>(id) || s.state != slot_state::creating)
    return fail(errc::object_already_sealed, tables_.describe(id),
                " is not being created by this builder");
  s.state = slot_state::sealed;
  s.last_use = ++tables_.hdr->tick;
  return make_ref(slot, holder);
}

void store_impl::abandon(uint32_t slot, uint32_t holder,
                         object_id id) noexcept {
  if (tables_.slots[slot].id != static_cast<uint64_t>(id))
    return;
  drop_handle(slot, holder);
}

caf::expected<object_ref> store_impl::get(object_id id) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto acquired = acquire_locked(g, tables_, self_, id);
  if (!acquired)
    return std::move(acquired.error());
  return make_ref(acquired->first, acquired->second);
}

void store_impl::add_handle(uint32_t slot, uint32_t holder) noexcept {
  update_or_warn(tables_, self_, [&] {
    tables_.holders[holder].handles += 1;
    tables_.slots[slot].handles += 1;
    tables_.slots[slot].ref_count += 1;
  });
}

void store_impl::drop_handle(uint32_t slot, uint32_t holder) noexcept {
  update_or_warn(tables_, self_,
                 [&] { tables_.drop_handle_locked(slot, holder); });
}

caf::expected<uint32_t> store_impl::park(uint32_t slot, object_id id) {
  return add_reference(tables_, self_, slot, id, [&](uint32_t holder) {
    tables_.holders[holder].parked += 1;
    tables_.slots[slot].ref_count += 1;
    return holder;
  });
}

void store_impl::add_parked(uint32_t slot, uint32_t holder) noexcept {
  update_or_warn(tables_, self_, [&] {
    tables_.holders[holder].parked += 1;
    tables_.slots[slot].ref_count += 1;
  });
}

void store_impl::drop_parked(uint32_t slot, uint32_t holder) noexcept {
  update_or_warn(tables_, self_, [&] {
    auto& h = tables_.holders[holder];
    if (h.slot != slot || h.parked == 0)
      return; // cannot happen while the reference lives; never underflow
    h.parked -= 1;
    tables_.slots[slot].ref_count -= 1;
    tables_.release_holder_if_empty_locked(holder);
    tables_.free_object_if_unreferenced_locked(slot);
  });
}

uint64_t store_impl::ref_count(uint32_t slot, object_id id) {
  guard g{tables_, self_};
  if (!g.ok() || tables_.slots[slot].id != static_cast<uint64_t>(id))
    return 0;
  return tables_.slots[slot].ref_count;
}

// -- transfer and pins --------------------------------------------------------

caf::expected<transfer_ticket> store_impl::export_ticket(uint32_t slot,
                                                         object_id id) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto* hdr = tables_.hdr;
  auto& s = tables_.slots[slot];
  if (s.id != static_cast<uint64_t>(id))
    return fail(errc::object_not_found, tables_.describe(id),
                " no longer exists");
  auto index = hdr->free_ticket;
  if (index == npos32)
    return fail(errc::table_full, "store '", name_, "': all ", hdr->max_tickets,
                " transfer tickets are in transit; redeem or cancel some, or "
                "create the store with a larger max_tickets");
  auto holder = tables_.find_or_add_holder_locked(slot, self_);
  if (!holder)
    return std::move(holder.error());
  auto& t = tables_.tickets[index];
  hdr->free_ticket = t.next_free;
  t.object = s.id;
  t.slot = slot;
  t.process = self_;
  t.next_free = npos32;
  auto ticket_id = (hdr->next_ticket_sequence++ << hdr->ticket_bits) | index;
  commit();
  t.id = ticket_id;
  tables_.holders[*holder].tickets += 1;
  s.ref_count += 1;
  return transfer_ticket{id, ticket_id};
}

caf::expected<object_ref> store_impl::redeem(const transfer_ticket& ticket) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  if (tables_.find_ticket_locked(ticket) == npos32)
    return no_ticket(name_, ticket);
  // Take a handle first (restoring the object if needed, which may release
  // the lock), then check the ticket again and let the handle replace it.
  auto acquired = acquire_locked(g, tables_, self_, ticket.object);
  if (!acquired)
    return std::move(acquired.error());
  auto [slot, importer] = *acquired;
  auto index = tables_.find_ticket_locked(ticket);
  if (index == npos32) { // cancelled while the lock was released
    tables_.drop_handle_locked(slot, importer);
    return no_ticket(name_, ticket);
  }
  tables_.retire_ticket_locked(index);
  return make_ref(slot, importer);
}

caf::error store_impl::cancel(const transfer_ticket& ticket) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto index = tables_.find_ticket_locked(ticket);
  if (index == npos32)
    return no_ticket(name_, ticket);
  auto slot = tables_.retire_ticket_locked(index);
  tables_.free_object_if_unreferenced_locked(slot);
  return caf::none;
}

caf::expected<bool> store_impl::pin(uint32_t slot, object_id id) {
  return add_reference(tables_, self_, slot, id, [&](uint32_t holder) {
    auto& h = tables_.holders[holder];
    if (h.pins != 0)
      return false;
    auto& s = tables_.slots[slot];
    h.pins = 1;
    s.pins += 1;
    s.ref_count += 1;
    return true;
  });
}

caf::error store_impl::unpin(object_id id) {
  guard g{tables_, self_};
  if (!g.ok())
    return g.error();
  auto* s = tables_.lookup_locked(id);
  if (s == nullptr)
    return fail(errc::object_not_found, "store '", name_, "' has no object ",
                to_string(id));
  auto slot = static_cast<uint32_t>(s - tables_.slots);
  auto holder = tables_.find_holder_locked(slot, self_);
  if (holder == npos32 || tables_.holders[holder].pins == 0)
    return fail(errc::not_pinned, tables_.describe(id),
                " is not pinned by process ", identity_.pid);
  tables_.holders[holder].pins = 0;
  s->pins -= 1;
  s->ref_count -= 1;
  tables_.release_holder_if_empty_locked(holder);
  tables_.free_object_if_unreferenced_locked(slot);
  return caf::none;
}

} // namespace ferry::store::detail
