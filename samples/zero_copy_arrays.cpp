// zero_copy_arrays: one large array in the store, read by two other
// processes without a copy.
//
// This process ("maker") writes 128 MiB of doubles straight into a store
// object (`object_store::create`, fill, `seal`) and sends it as a
// `ferry::store::shared_array<double>` to a reader actor in each of two other
// processes (this program started again as "reader-1" and "reader-2"). Each
// reader answers which store object it got, a checksum of every element, the
// host-wide reference count, and its own memory from /proc/self/status before
// and after reading: RssAnon (private memory) must not grow by the array's
// size, because the elements are read in place in shared memory (they count
// in RssShmem, mapped once when the node attached the store).
//
// The elements are const: `xs[0] = 1.0;` does not compile. To change them, a
// reader takes a private copy with `to_vector()`, and then RssAnon does grow
// by the array's size, which shows the measurement would have seen a copy.
// Run: ./zero_copy_arrays [--sample.mib=N]   (default 128)
#include "peer_process.hpp"
#include "store_cleanup.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/object_store.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <span>
#include <string>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;

/// What a reader saw. Sizes of memory in KiB.
struct read_report {
  std::string reader;
  uint64_t object = 0;
  uint64_t checksum = 0;
  uint64_t ref_count = 0;
  int64_t anon_before = 0;
  int64_t anon_after = 0;
  int64_t shmem_before = 0;
  int64_t shmem_after = 0;
  int64_t shmem_at_start = 0;
  int64_t anon_with_copy = 0;
  double first_in_copy = 0;
  double first_in_array = 0;
  double read_ms = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_report& x) {
  return f(caf::meta::type_name("read_report"), x.reader, x.object, x.checksum,
           x.ref_count, x.anon_before, x.anon_after, x.shmem_before,
           x.shmem_after, x.shmem_at_start, x.anon_with_copy, x.first_in_copy, x.first_in_array,
           x.read_ms);
}

/// The sample's configuration: ferry's plus the array size.
class config : public ferry::node_config {
public:
  config() {
    opt_group{custom_options_, "sample"}.add(mib, "mib",
                                             "size of the array in MiB");
    add_message_type<ferry::store::shared_array<double>>("sample.f64_array");
    add_message_type<read_report>("sample.read_report");
  }

  uint64_t mib = 128;
};

/// Returns a field of /proc/self/status in KiB, e.g. "RssAnon:".
int64_t status_kib(const char* key) {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0)
      return std::stoll(line.substr(std::strlen(key)));
  return -1;
}

/// FNV-1a over the elements' 64-bit patterns: reads every byte.
uint64_t checksum(std::span<const double> xs) {
  uint64_t hash = 1469598103934665603ull;
  for (double x : xs) {
    uint64_t word = 0;
    std::memcpy(&word, &x, sizeof(word));
    hash = (hash ^ word) * 1099511628211ull;
  }
  return hash;
}

// -- the readers --------------------------------------------------------------

struct reader_state {
  int64_t anon_before = 0;
  int64_t shmem_before = 0;
  int64_t shmem_at_start = 0; // right after the node attached the store
  ferry::store::shared_array<double> kept; // held until the reader exits
};

caf::behavior reader(caf::stateful_actor<reader_state>* self,
                     std::string name, int64_t shmem_at_start) {
  self->state.shmem_at_start = shmem_at_start;
  return {
    [self](const std::string&) {
      // Baseline, after the node started and the link is up.
      self->state.anon_before = status_kib("RssAnon:");
      self->state.shmem_before = status_kib("RssShmem:");
      return true;
    },
    [self, name](const ferry::store::shared_array<double>& xs) {
      read_report r;
      r.reader = name;
      r.object = static_cast<uint64_t>(xs.ref().id());
      auto start = std::chrono::steady_clock::now();
      r.checksum = checksum(xs.span());
      r.read_ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
      r.ref_count = xs.ref().ref_count();
      r.anon_before = self->state.anon_before;
      r.shmem_before = self->state.shmem_before;
      r.shmem_at_start = self->state.shmem_at_start;
      r.anon_after = status_kib("RssAnon:");
      r.shmem_after = status_kib("RssShmem:");
      // Mutation needs a private copy.
      std::vector<double> mine = xs.to_vector();
      mine[0] = -1.0;
      r.anon_with_copy = status_kib("RssAnon:");
      r.first_in_copy = mine[0];
      r.first_in_array = xs[0];
      self->state.kept = xs;
      return r;
    },
  };
}

int run_reader(config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << cfg.node_name << ": " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto actor = (*n)->system().spawn(reader, cfg.node_name,
                                    status_kib("RssShmem:"));
  auto port = (*n)->publish(actor);
  if (!port) {
    std::cerr << cfg.node_name << ": " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return 0;
}

std::string mib(int64_t kib) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(kib) / 1024);
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "zero_copy_arrays: " << ferry::render(err) << '\n';
    return 2;
  }
  uint64_t bytes = cfg.mib << 20;
  cfg.store_capacity = bytes + (16 << 20);
  if (cfg.node_name.rfind("reader-", 0) == 0)
    return run_reader(cfg);
  cfg.node_name = "maker";
  cfg.store_name = "ferry-sample-zero_copy_arrays-" + std::to_string(getpid());
  sample::remove_store_at_exit cleanup{cfg.store_name};
  bool ok = true;
  {
    auto peer = [&](const char* name) {
      return std::vector<std::string>{
        std::string{"--ferry.node-name="} + name,
        "--ferry.store.name=" + cfg.store_name,
        "--sample.mib=" + std::to_string(cfg.mib)};
    };
    sample::peer_process r1{peer("reader-1")};
    sample::peer_process r2{peer("reader-2")};
    auto n = ferry::node::start(cfg);
    if (!n || (*n)->store() == nullptr) {
      std::cerr << "zero_copy_arrays: "
                << (n ? "no store" : ferry::render(n.error())) << '\n';
      return 1;
    }
    auto& maker = **n;
    // Make the array once, in place: no private buffer, no copy.
    auto builder = maker.store()->create(bytes);
    if (!builder) {
      std::cerr << ferry::render(builder.error()) << '\n';
      return 1;
    }
    auto* out = reinterpret_cast<double*>(builder->bytes().data());
    size_t count = bytes / sizeof(double);
    for (size_t i = 0; i < count; ++i)
      out[i] = static_cast<double>(i) * 0.25;
    auto ref = builder->seal();
    auto xs = ref ? ferry::store::shared_array<double>::from_ref(std::move(*ref))
                  : caf::expected<ferry::store::shared_array<double>>{
                    std::move(ref.error())};
    if (!xs) {
      std::cerr << ferry::render(xs.error()) << '\n';
      return 1;
    }
    auto id = static_cast<uint64_t>(xs->ref().id());
    auto sum = checksum(xs->span());
    std::cout << "maker (pid " << getpid() << ") wrote " << cfg.mib
              << " MiB of doubles into store object " << id << ", checksum "
              << std::hex << sum << std::dec << "\n\n";
    caf::scoped_actor self{maker.system()};
    for (auto* p : {&r1, &r2}) {
      auto whom = maker.remote_actor("127.0.0.1", p->port());
      if (!whom) {
        std::cerr << ferry::render(whom.error()) << '\n';
        return 1;
      }
      self->request(*whom, 10s, std::string{"baseline"})
        .receive([](bool) {},
                 [&](const caf::error& err) {
                   std::cout << "baseline: " << ferry::render(err) << '\n';
                   ok = false;
                 });
      self->request(*whom, 30s, *xs)
        .receive(
          [&](const read_report& r) {
            auto size_kib = static_cast<int64_t>(bytes >> 10);
            bool same = r.object == id && r.checksum == sum;
            // A copy grows RssAnon by the array's size. Reading in place
            // grows it by nothing, except in a sanitizer build: ASan maps
            // shadow memory for what it checks, an eighth of the bytes
            // read (kernels that back reads of untouched memory with real
            // pages count it), so the bound is half the array's size.
            bool no_copy = r.anon_after - r.anon_before < size_kib / 2;
            bool copy_seen = r.anon_with_copy - r.anon_after > size_kib * 9 / 10;
            bool immutable = r.first_in_copy == -1.0 && r.first_in_array == 0.0;
            std::cout << r.reader << " (pid " << p->pid() << "):\n"
                      << "  object " << r.object << ", checksum " << std::hex
                      << r.checksum << std::dec << (same ? " (same)" : " (DIFFERENT)")
                      << ", " << r.ref_count
                      << " references on the host; every element read in "
                      << static_cast<int>(r.read_ms) << " ms\n"
                      << "  RssAnon  " << mib(r.anon_before) << " -> "
                      << mib(r.anon_after) << " after reading every element"
                      << (no_copy ? " (no copy)" : " (GREW)") << '\n'
                      << "  RssShmem " << mib(r.shmem_before) << " -> "
                      << mib(r.shmem_after)
                      << " (the store's pages; " << mib(r.shmem_at_start)
                      << " already when the node attached, before the array "
                         "existed)\n"
                      << "  to_vector() and mine[0] = -1: RssAnon "
                      << mib(r.anon_with_copy) << " (the copy), copy[0] = "
                      << r.first_in_copy << ", array[0] still "
                      << r.first_in_array << '\n';
            ok = ok && same && no_copy && copy_seen && immutable;
          },
          [&](const caf::error& err) {
            std::cout << "  refused: " << ferry::render(err) << '\n';
            ok = false;
          });
    }
    if (auto summary = maker.store()->memory_summary()) {
      std::cout << "\nthe store holds " << summary->objects.size()
                << " object(s), " << mib(static_cast<int64_t>(
                                        summary->bytes_used >> 10))
                << " used; object " << id << " is held by";
      for (auto& obj : summary->objects)
        for (auto& h : obj.holders)
          std::cout << " pid " << h.pid;
      std::cout << '\n';
      ok = ok && summary->objects.size() == 1;
    }
  }
  std::cout << "zero_copy_arrays: "
            << (ok ? "one object, read in place by both readers"
                   : "FAILED: see above")
            << '\n';
  return ok ? 0 : 1;
}
