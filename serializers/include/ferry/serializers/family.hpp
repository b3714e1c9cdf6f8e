// Families added at run time (Dask's `register_serialization_family`).
//
// A family is a named way to turn values into frames and back. The built-in
// ones (cereal.binary, cereal.portable, cereal.json, msgpack, caf, raw) are
// compiled into every registry; others implement `family` and are added with
// `registry::register_family(name, ptr)`. Values reach a family type-erased:
// a `std::type_index` plus a pointer to the value (encode) or to a
// default-constructed value to fill (decode). `function_family` builds one
// from per-type functions:
//
//     auto f = std::make_shared<function_family>();
//     f->add<point>(
//       [](const point& p, const context&) -> caf::expected<std::vector<frame>> {...},
//       [](std::span<const frame> fs, const context&, const limits&) -> caf::expected<point> {...});
//     reg.register_family("points.v1", f);
//
// Every call receives the `context` (sender, recipient, link, same_host).
// Decoders receive hostile frames and must honour `limits`.
//
// Thread-safety: a registered family is shared by every thread of the node
// and must be safe to call concurrently; `function_family` is, once built
// (call `add` before registering it).
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/options.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <functional>
#include <span>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

namespace ferry::serializers {

/// A family added at run time.
class family {
public:
  virtual ~family();

  /// Returns whether this family can encode and decode values of `type`.
  [[nodiscard]] virtual bool can_encode(std::type_index type) const = 0;

  /// Returns why `type` cannot be encoded, for diagnostics.
  [[nodiscard]] virtual std::string why_not(std::type_index type) const;

  /// Returns the format version written into payload headers.
  [[nodiscard]] virtual uint32_t version() const noexcept;

  /// Encodes `*value`, of type `type`, into frames.
  /// REQUIRES: `can_encode(type)`.
  [[nodiscard]] virtual caf::expected<std::vector<frame>>
  encode(std::type_index type, const void* value, const context& ctx) const = 0;

  /// Decodes hostile `frames` into `*out`, a default-constructed `type`.
  /// REQUIRES: `can_encode(type)`.
  [[nodiscard]] virtual caf::error decode(std::type_index type,
                                          std::span<const frame> frames,
                                          void* out, const context& ctx,
                                          const limits& lim) const = 0;
};

/// A family made of per-type encode and decode functions.
class function_family : public family {
public:
  /// Adds functions for `T`: `enc(const T&, const context&)` returns
  /// `caf::expected<std::vector<frame>>`, `dec(std::span<const frame>, const
  /// context&, const limits&)` returns `caf::expected<T>`.
  template <class T, class Enc, class Dec>
  function_family& add(Enc enc, Dec dec) {
    entry e;
    e.encode = [enc](const void* value, const context& ctx) {
      return enc(*static_cast<const T*>(value), ctx);
    };
    e.decode = [dec](std::span<const frame> frames, void* out,
                     const context& ctx, const limits& lim) -> caf::error {
      auto result = dec(frames, ctx, lim);
      if (!result)
        return std::move(result.error());
      *static_cast<T*>(out) = std::move(*result);
      return {};
    };
    entries_[std::type_index{typeid(T)}] = std::move(e);
    return *this;
  }

  bool can_encode(std::type_index type) const override;

  caf::expected<std::vector<frame>> encode(std::type_index type,
                                           const void* value,
                                           const context& ctx) const override;

  caf::error decode(std::type_index type, std::span<const frame> frames,
                    void* out, const context& ctx,
                    const limits& lim) const override;

private:
  struct entry {
    std::function<caf::expected<std::vector<frame>>(const void*,
                                                    const context&)>
      encode;
    std::function<caf::error(std::span<const frame>, void*, const context&,
                             const limits&)>
      decode;
  };

  std::unordered_map<std::type_index, entry> entries_;
};

} // namespace ferry::serializers
