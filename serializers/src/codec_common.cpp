// Helpers every built-in family codec shares (detail/codec_common.hpp,
// detail/type_ops.hpp): the start of each codec error message (`describe`),
// the checks that a payload has a main frame and that a decode read all of
// its frames, the per-thread output stream that
// the stream-based encoders lease, and the lookup of a built-in family by
// name. The family-specific parts live in families/<family>.cpp.
//
// Invariants: at most one `ostream_lease` per thread holds the thread's cached
// stream; a nested lease on the same thread builds a stream of its own, and
// the cached stream points at no buffer while no lease holds it.
//
// Thread-safety: every function is safe to call from any number of threads;
// the cached stream is thread_local and never shared.

#include "ferry/serializers/detail/codec_common.hpp"
#include "ferry/serializers/detail/type_ops.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace ferry::serializers::detail {

std::string describe(const call_info& info) {
  std::string result = info.decoding ? "decoding " : "encoding ";
  result += info.type_name;
  result += " with family ";
  result += info.family;
  return result;
}

namespace {

/// The stream `ostream_lease` hands out on this thread.
struct cached_ostream {
  std::ostream os{nullptr};
  bool busy = false;
};

cached_ostream& thread_ostream() {
  thread_local cached_ostream instance;
  return instance;
}

} // namespace

ostream_lease::ostream_lease(std::streambuf* buf) {
  auto& cached = thread_ostream();
  if (cached.busy) {
    own_.emplace(buf);
    os_ = &*own_;
    return;
  }
  cached.busy = true;
  cached.os.rdbuf(buf); // Also clears the state bits.
  os_ = &cached.os;
}

ostream_lease::~ostream_lease() {
  if (own_)
    return;
  auto& cached = thread_ostream();
  cached.os.rdbuf(nullptr);
  cached.busy = false;
}

caf::error require_main_frame(const call_info& info,
                              std::span<const frame> frames) {
  if (frames.empty())
    return make_error(errc::frame_mismatch,
                      describe(info) +
                        ": the payload has no frames; the sender is broken "
                        "or the payload was truncated");
  return {};
}

caf::error require_frames_read(const call_info& info, size_t count) {
  auto scope = current_scope();
  for (size_t i = 1; i < count; ++i) {
    if (scope != nullptr && i < scope->frames_read.size() &&
        scope->frames_read[i])
      continue;
    return make_error(errc::unused_frame,
                      describe(info) + " (frame " + std::to_string(i) + " of " +
                        std::to_string(count) +
                        "): the value reads no member from this frame; its "
                        "encoder makes a frame only for a separate member "
                        "it names, so the sender's type differs from the "
                        "receiver's or the payload is corrupt");
  }
  return {};
}

std::optional<builtin> builtin_from_name(std::string_view name) noexcept {
  for (size_t i = 0; i < builtin_count; ++i)
    if (builtin_names[i] == name)
      return static_cast<builtin>(i);
  return std::nullopt;
}

} // namespace ferry::serializers::detail
