// The per-thread state of one encode or decode call. Not API.
//
// Codecs set a scope for the duration of one call, so that code deep inside a
// library's recursion (cereal archives, msgpack adaptors, CAF inspectors) can
// reach the call's frames, allocation budget and trace sink. Scopes nest and
// restore the previous one on exit.
#pragma once

#include "ferry/serializers/frame.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

namespace ferry::serializers::detail {

/// An exception type registered with `registry::register_error_exception`.
struct error_exception {
  std::type_index type;
  /// Inside a catch block: if the exception being handled is of `type`, sets
  /// `out` to the error it carries and returns true.
  bool (*carried)(caf::error& out);
};

struct shape_node;

struct codec_scope {
  /// Encoding: frames made so far; `separate<>` members append to it.
  std::vector<frame>* out_frames = nullptr;
  /// Encoding: keep-alive for view frames of the encoded value.
  std::shared_ptr<const void> keep_alive;
  /// Decoding: all frames of the payload.
  std::span<const frame> in_frames;
  /// Decoding: which of `in_frames` a `separate<>` member has read (empty
  /// until the first). The encoder gives every member a frame of its own;
  /// a frame named twice would be copied once per name.
  std::vector<bool> frames_read;
  /// Decoding: bytes the decoder may still allocate ahead of reading.
  uint64_t budget = UINT64_MAX;
  /// Decoding: the shape the sending build wrote the value's type with, when
  /// it differs from this build's (writer_shapes.hpp); null otherwise.
  const shape_node* writer = nullptr;
  /// Decoding: type of every shared object seen so far, by cereal id.
  std::unordered_map<uint32_t, std::type_index> shared_types;
  /// Exception types whose errors the codecs return as they are.
  std::span<const error_exception> error_exceptions;
  /// Trace sink, or null when tracing is off.
  const std::function<void(std::string_view)>* trace = nullptr;
  /// "encode" or "decode".
  std::string_view op;
  /// Family name.
  std::string_view family;
  /// Nesting of traced members.
  int trace_depth = 0;
};

/// Returns the innermost scope of the calling thread, or null.
codec_scope* current_scope() noexcept;

/// Installs `s` as the calling thread's scope until destroyed.
class scope_guard {
public:
  explicit scope_guard(codec_scope& s) noexcept;
  scope_guard(const scope_guard&) = delete;
  scope_guard& operator=(const scope_guard&) = delete;
  ~scope_guard();

private:
  codec_scope* prev_;
};

/// Charges `n` elements of `size` bytes against the current scope's budget;
/// throws `decode_fault` when the budget would be exceeded.
void charge(uint64_t n, uint64_t size, std::string_view what);

/// Inside a catch block: if the exception being handled has a type the
/// current scope's registry knows (`error_exceptions`), sets `out` to the
/// error it carries and returns true.
bool carried_error(caf::error& out);

/// Emits a trace line for member `index` (of type `member`) of `owner`.
void trace_member(const std::type_info& owner, size_t index,
                  const std::type_info& member);

/// Returns whether the current scope traces.
inline bool tracing() noexcept {
  auto s = current_scope();
  return s != nullptr && s->trace != nullptr;
}

} // namespace ferry::serializers::detail
