// out_frame: one frame on its way out, as the pieces a transport writes.
//
// A frame's header and fixed fields, and every run of bytes below
// `copy_below`, are written into one buffer the frame owns; a larger run
// (a payload frame of an encoder, a store object's bytes, a pulled chunk)
// stays where it is and the frame keeps it alive, so a transport writes it
// with scatter-gather from there: no staging copy. `pieces` lists the
// frame's bytes in order as views of that buffer and of the runs.
//
// Building: make the frame with its type, write the fields through
// `fields()` and runs through `append`, then `finish()` (which writes the
// header's length). A finished frame may be moved: the views stay valid
// (they point into heap memory the frame owns or keeps alive).
//
// Thread-safety: a value type; built on one thread, then handed over.
#pragma once

#include "wire/codec.hpp"
#include "wire/frame.hpp"

#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ferry::detail::wire {

class out_frame {
public:
  /// Runs of bytes shorter than this are copied into the frame's buffer.
  static constexpr size_t copy_below = 4096;

  out_frame() = default;

  /// Starts a frame of `type`.
  explicit out_frame(frame_type type);

  out_frame(out_frame&&) noexcept = default;
  out_frame& operator=(out_frame&&) noexcept = default;

  /// Returns a writer that appends fields to the frame.
  writer fields() { return writer{owned_}; }

  /// Appends `bytes`: copied when short, else viewed and kept alive by
  /// `keep_alive` (which must keep them unchanged until the frame is gone).
  void append(std::span<const std::byte> bytes,
              const std::shared_ptr<const void>& keep_alive);

  /// Writes the header's length; call once, after the last field.
  void finish();

  /// Returns bytes sent as they are, outside any frame (the preface).
  static out_frame raw(std::span<const std::byte> bytes);

  /// Returns the frame's type.
  frame_type type() const noexcept { return type_; }

  /// Returns the frame's size on the wire, header included.
  uint64_t size() const noexcept { return owned_.size() + viewed_; }

  /// Appends the frame's bytes in order to `out`, as views.
  void pieces(std::vector<std::span<const std::byte>>& out) const;

  /// Returns the frame's bytes in one vector (tests).
  std::vector<std::byte> flatten() const;

private:
  struct view {
    /// Bytes of `owned_` that come before this run.
    size_t after = 0;
    std::span<const std::byte> bytes;
  };

  frame_type type_ = frame_type::heartbeat;
  std::vector<std::byte> owned_;
  boost::container::small_vector<view, 2> views_;
  boost::container::small_vector<std::shared_ptr<const void>, 2> keep_;
  uint64_t viewed_ = 0;
};

/// Returns the finished frame of `x`, a control type with `frame_type`
/// `T::type` and a `write(writer&)` member.
template <class T>
out_frame make_frame(const T& x) {
  out_frame result{T::type};
  auto w = result.fields();
  x.write(w);
  result.finish();
  return result;
}

} // namespace ferry::detail::wire
