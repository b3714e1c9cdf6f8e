// A frame: one buffer of a payload.
//
// A frame either owns its bytes (a `std::vector<std::byte>` that a decoder may
// adopt instead of copying) or is a read-only view of memory owned elsewhere:
// the encoded value itself (the `raw` family) or shared memory. A view may
// carry a keep-alive, a `std::shared_ptr<const void>` that holds the viewed
// memory alive for as long as the frame (or a copy of it) lives. A view
// without a keep-alive is valid only while its owner keeps the memory alive;
// whoever makes such a frame states how long that is.
//
// Thread-safety: a frame is a value; distinct frames may be used from distinct
// threads, and const access to one frame from many threads is safe.
//
//     frame a{std::vector<std::byte>(16)};                 // owned
//     frame b = frame::view(a.bytes(), keep_alive_ptr);    // view
#pragma once

#include "ferry/serializers/detail/fresh_memory.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace ferry::serializers {

/// One buffer of a payload: owned bytes or a read-only view.
class frame {
public:
  /// Constructs an empty owned frame.
  frame() noexcept = default;

  /// Constructs an owned frame holding `bytes`.
  explicit frame(std::vector<std::byte> bytes) noexcept
    : owned_(std::move(bytes)),
      view_(owned_) {
    // nop
  }

  /// Returns a frame viewing `bytes`; `keep_alive` (may be null) holds the
  /// viewed memory alive for the lifetime of the frame and its copies.
  [[nodiscard]] static frame
  view(std::span<const std::byte> bytes,
       std::shared_ptr<const void> keep_alive = nullptr) noexcept {
    frame result;
    result.view_ = bytes;
    result.keep_alive_ = std::move(keep_alive);
    result.is_view_ = true;
    return result;
  }

  frame(const frame& other)
    : owned_(other.owned_),
      view_(other.is_view_ ? other.view_ : std::span<const std::byte>{owned_}),
      keep_alive_(other.keep_alive_),
      is_view_(other.is_view_) {
    // nop
  }

  frame(frame&& other) noexcept
    : owned_(std::move(other.owned_)),
      view_(other.is_view_ ? other.view_ : std::span<const std::byte>{owned_}),
      keep_alive_(std::move(other.keep_alive_)),
      is_view_(other.is_view_) {
    other.view_ = {};
    other.is_view_ = false;
  }

  frame& operator=(const frame& other) {
    if (this != &other) {
      frame tmp{other};
      *this = std::move(tmp);
    }
    return *this;
  }

  frame& operator=(frame&& other) noexcept {
    owned_ = std::move(other.owned_);
    view_ = other.is_view_ ? other.view_ : std::span<const std::byte>{owned_};
    keep_alive_ = std::move(other.keep_alive_);
    is_view_ = other.is_view_;
    other.view_ = {};
    other.is_view_ = false;
    return *this;
  }

  ~frame() = default;

  /// Returns the frame's bytes.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return view_;
  }

  /// Returns the number of bytes.
  [[nodiscard]] std::size_t size() const noexcept { return view_.size(); }

  /// Returns whether the frame owns its bytes.
  [[nodiscard]] bool owned() const noexcept { return !is_view_; }

  /// Returns the keep-alive of a view (null for owned frames).
  [[nodiscard]] const std::shared_ptr<const void>& keep_alive() const noexcept {
    return keep_alive_;
  }

  /// Moves the owned bytes out, or copies the viewed bytes; leaves the frame
  /// empty.
  [[nodiscard]] std::vector<std::byte> release() {
    std::vector<std::byte> result;
    if (is_view_)
      detail::assign_fresh(result, view_.data(), view_.size());
    else
      result = std::move(owned_);
    *this = frame{};
    return result;
  }

private:
  std::vector<std::byte> owned_;
  std::span<const std::byte> view_;
  std::shared_ptr<const void> keep_alive_;
  bool is_view_ = false;
};

} // namespace ferry::serializers
