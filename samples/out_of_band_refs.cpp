// out_of_band_refs: a store handle serialized outside ferry's message path.
//
// Inside a ferry message an `object_ref` (or `shared_array`) travels *in
// band*: the sender exports a transfer ticket and the receiver takes that
// reference over, so the store always knows who holds the object. User code
// that serializes a handle itself (here: cereal straight into a string) makes
// a copy the store cannot see. By default ferry then *pins* the object until
// this process exits or calls `unpin`, and warns once. In strict mode the
// same code gets `ferry_sto: out_of_band_ref`, whose text explains why and
// what to do. Strict mode is the flag `--ferry.store.strict-refs`, or
// `allow_out_of_band_ref_serialization = false` in `node_config` (or in
// `store_config` when using the store alone).
//
// This process runs the default case, then starts itself again with
// `--ferry.store.strict-refs` for the strict case (the setting is per
// process; both share one store). Run: ./out_of_band_refs
#include "store_cleanup.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include "ferry/store/errc.hpp"
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"

#include <cereal/archives/binary.hpp>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

/// User code outside ferry: writes a handle with cereal into a string.
std::string save_with_cereal(const ferry::store::object_ref& ref) {
  std::ostringstream out;
  cereal::BinaryOutputArchive archive{out};
  archive(ref); // calls object_ref::save, which throws in strict mode
  return out.str();
}

/// ... and reads one back.
ferry::store::object_ref load_with_cereal(const std::string& bytes) {
  std::istringstream in{bytes};
  cereal::BinaryInputArchive archive{in};
  ferry::store::object_ref ref;
  archive(ref);
  return ref;
}

/// Returns "refs N, pinned yes/no" for object `id`, or "freed".
std::string describe(ferry::store::object_store& store,
                     ferry::store::object_id id) {
  auto summary = store.memory_summary();
  if (!summary)
    return ferry::render(summary.error());
  for (auto& obj : summary->objects)
    if (obj.id == id)
      return "refs " + std::to_string(obj.ref_count) + ", pinned "
             + (obj.pinned ? "yes" : "no");
  return "freed";
}

/// Puts a 64 KiB object into the store and returns its handle (empty on
/// failure, after printing why).
ferry::store::object_ref make_object(ferry::store::object_store& store) {
  std::vector<std::byte> leaves(64 * 1024, std::byte{0x7e});
  auto ref = store.put(leaves);
  if (!ref) {
    std::cerr << ferry::render(ref.error()) << '\n';
    return {};
  }
  return std::move(*ref);
}

/// The default case: the handle is pinned with a warning; unpin frees it.
bool pin_and_unpin(ferry::store::object_store& store) {
  std::vector<std::string> warnings;
  ferry::store::set_log_hook([&](std::string_view line) {
    warnings.emplace_back(line);
    std::cout << "  [warning] " << line << '\n';
  });
  auto ref = make_object(store);
  if (!ref)
    return false;
  auto id = ref.id();
  std::cout << "put " << to_string(ref) << ": " << describe(store, id) << '\n'
            << "user code serializes the handle with cereal:\n";
  auto bytes = save_with_cereal(ref);
  std::cout << "  got " << bytes.size() << " bytes; object now "
            << describe(store, id) << '\n';
  ref.reset();
  std::cout << "the handle is dropped; object now " << describe(store, id)
            << " (the pin keeps it for whoever reads the string)\n";
  auto again = load_with_cereal(bytes);
  std::cout << "reading the string back gives " << to_string(again)
            << ", same bytes: "
            << (again.bytes()[0] == std::byte{0x7e} ? "yes" : "no") << '\n';
  again.reset();
  if (auto err = store.unpin(id)) {
    std::cout << "unpin failed: " << ferry::render(err) << '\n';
    return false;
  }
  std::cout << "store.unpin(" << to_string(id) << "): object now "
            << describe(store, id) << '\n';
  auto gone = store.get(id);
  std::cout << "store.get(" << to_string(id) << ") -> "
            << (gone ? "still there" : ferry::render(gone.error())) << '\n';
  ferry::store::set_log_hook({});
  return warnings.size() == 1 && !gone
         && gone.error() == ferry::store::errc::object_not_found;
}

/// The strict case: the same code fails and says why.
bool refuse(ferry::store::object_store& store) {
  auto ref = make_object(store);
  if (!ref)
    return false;
  auto id = ref.id();
  std::cout << "put " << to_string(ref) << "; user code serializes it with "
               "cereal:\n";
  try {
    save_with_cereal(ref);
    std::cout << "  serialized: strict mode did not refuse\n";
    return false;
  } catch (const ferry::store::ref_serialization_error& ex) {
    std::cout << "  " << ex.what() << '\n';
    ref.reset();
    std::cout << "nothing was pinned: after dropping the handle the object "
                 "is "
              << describe(store, id) << '\n';
    return ex.error() == ferry::store::errc::out_of_band_ref
           && describe(store, id) == "freed";
  }
}

/// Starts this program again with `args`, sharing our stdout; returns its
/// exit status.
int run_child(std::vector<std::string> args) {
  std::string self = "/proc/self/exe";
  std::vector<char*> argv{self.data()};
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ)
      != 0)
    return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "out_of_band_refs: " << ferry::render(err) << '\n';
    return 2;
  }
  bool is_child = !cfg.store_name.empty()
                  && cfg.store_name.rfind("ferry-sample-out_of_band_refs-", 0)
                       == 0;
  if (!is_child)
    cfg.store_name = "ferry-sample-out_of_band_refs-"
                     + std::to_string(getpid());
  // The parent removes the store at the end; the child only attaches.
  sample::remove_store_at_exit cleanup{is_child ? std::string{}
                                                : cfg.store_name};
  cfg.store_capacity = 8 << 20;
  bool ok = false;
  {
    auto n = ferry::node::start(cfg);
    if (!n || (*n)->store() == nullptr) {
      std::cerr << "out_of_band_refs: no node or no store\n";
      return 1;
    }
    auto& store = *(*n)->store();
    if (cfg.allow_out_of_band_ref_serialization) {
      std::cout << "== default: allow_out_of_band_ref_serialization = true "
                   "(pid "
                << getpid() << ")\n";
      ok = pin_and_unpin(store);
    } else {
      std::cout << "\n== strict: --ferry.store.strict-refs (pid " << getpid()
                << ")\n";
      ok = refuse(store);
    }
  }
  if (is_child)
    return ok ? 0 : 1;
  std::cout.flush();
  auto strict = run_child({"--ferry.store.name=" + cfg.store_name,
                           "--ferry.store.strict-refs"});
  std::cout << "\nout_of_band_refs: default case "
            << (ok ? "pinned and unpinned" : "FAILED") << ", strict case "
            << (strict == 0 ? "refused with the explanation" : "FAILED")
            << '\n';
  return ok && strict == 0 ? 0 : 1;
}
