// A member that travels in a frame of its own.
//
// `separate<V>` wraps a contiguous array `V` (std::vector or std::basic_string
// of plain elements, see the `raw` family for which). Encoded by a ferry
// registry with `cereal.*`, `msgpack` or `caf`, its bytes do not go into the
// main frame: they become a frame of their own (a view of the member's
// memory, no copy), and the main frame holds the frame's index. Such a frame
// can then be spilled to the store or sent without copying the rest, like a
// Dask frame. A collection of large values gets one frame per element:
// `std::vector<separate<std::vector<float>>>` (Dask's `iterate_collection`).
//
// Outside a registry (plain cereal, msgpack or CAF code) the member is
// written inline, index 0, so the type stays usable everywhere.
//
// Format: the index as an unsigned 64-bit integer, then, when the index is 0,
// the array inline. Decoding checks the index against the payload's frames
// and the frame size against the element size, and refuses a frame that
// another member has read already: the encoder never shares a frame, and a
// hostile payload naming one large frame from many members would otherwise
// be copied once per member.
//
// Thread-safety: a value.
//
//     struct image { std::string name; separate<std::vector<uint8_t>> pixels; };
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/scope.hpp"

#include <msgpack.hpp>
#include <cstring>
#include <span>

#include <type_traits>
#include <utility>

namespace ferry::serializers {

/// Wraps a contiguous array `V` so that it gets a frame of its own.
template <class V>
class separate {
public:
  using value_type = V;
  using element_type = typename V::value_type;

  static_assert(std::is_trivially_copyable_v<element_type> &&
                  !std::is_pointer_v<element_type> &&
                  !std::is_same_v<element_type, bool> &&
                  !std::is_enum_v<element_type>,
                "ferry: separate<V> needs a contiguous array of plain values "
                "(integers, floating point, std::byte, aggregates of them)");

  separate() = default;

  explicit separate(V value) : value_(std::move(value)) {}

  /// Returns the wrapped array.
  [[nodiscard]] V& value() noexcept { return value_; }

  /// Returns the wrapped array.
  [[nodiscard]] const V& value() const noexcept { return value_; }

  friend bool operator==(const separate&, const separate&) = default;

  /// Returns the frame index to write: a new frame (viewing the array) when
  /// a registry is encoding, else 0 (inline).
  uint64_t make_frame() const {
    auto scope = detail::current_scope();
    if (scope == nullptr || scope->out_frames == nullptr)
      return 0;
    auto bytes = std::as_bytes(
      std::span<const element_type>{value_.data(), value_.size()});
    scope->out_frames->push_back(frame::view(bytes, scope->keep_alive));
    return scope->out_frames->size() - 1;
  }

  /// Fills the array from frame `index` of the payload being decoded.
  void load_frame(uint64_t index) {
    auto scope = detail::current_scope();
    if (scope == nullptr || index >= scope->in_frames.size())
      throw detail::decode_fault{
        errc::malformed_frame,
        "a separate member names frame " + std::to_string(index) +
          " but the payload has " +
          std::to_string(scope ? scope->in_frames.size() : 0) + " frames"};
    auto& read = scope->frames_read;
    if (read.empty())
      read.resize(scope->in_frames.size());
    if (read[index])
      throw detail::decode_fault{
        errc::malformed_frame,
        "frame " + std::to_string(index) +
          " is named by a second separate member; every separate member "
          "has a frame of its own, so the payload is hostile or corrupt"};
    read[index] = true;
    auto bytes = scope->in_frames[index].bytes();
    if (bytes.size() % sizeof(element_type) != 0)
      throw detail::decode_fault{
        errc::malformed_frame,
        "frame " + std::to_string(index) + " holds " +
          std::to_string(bytes.size()) + " bytes, not a whole number of " +
          std::to_string(sizeof(element_type)) + "-byte elements"};
    value_.resize(bytes.size() / sizeof(element_type));
    if (!bytes.empty())
      std::memcpy(value_.data(), bytes.data(), bytes.size());
  }

  // -- cereal -----------------------------------------------------------------

  template <class Archive>
  void save(Archive& ar) const {
    uint64_t index = make_frame();
    ar(index);
    if (index == 0)
      ar(value_);
  }

  template <class Archive>
  void load(Archive& ar) {
    uint64_t index = 0;
    ar(index);
    if (index == 0)
      ar(value_);
    else
      load_frame(index);
  }

  // -- msgpack ----------------------------------------------------------------

  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    uint64_t index = make_frame();
    pk.pack_array(2);
    pk.pack(index);
    if (index == 0)
      pk.pack(value_);
    else
      pk.pack_nil();
  }

  void msgpack_unpack(const msgpack::object& o) {
    if (o.type != msgpack::type::ARRAY || o.via.array.size != 2)
      throw detail::decode_fault{errc::malformed_frame,
                                 "a separate member is not a 2-element array"};
    uint64_t index = 0;
    o.via.array.ptr[0].convert(index);
    if (index == 0)
      o.via.array.ptr[1].convert(value_);
    else
      load_frame(index);
  }

  // -- CAF --------------------------------------------------------------------

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, separate& x) {
    if constexpr (std::is_same_v<typename Inspector::result_type, void>) {
      f(x.value_);
    } else if constexpr (Inspector::reads_state) {
      uint64_t index = x.make_frame();
      if (auto err = f(index))
        return err;
      if (index == 0)
        return f(x.value_);
      return {};
    } else {
      uint64_t index = 0;
      if (auto err = f(index))
        return err;
      if (index == 0)
        return f(x.value_);
      x.load_frame(index);
      return {};
    }
  }

private:
  V value_;
};

} // namespace ferry::serializers
