// Per-value customisation: wrap one value with its own conversion.
//
// `wrapped<T, Codec>` carries a `T` that every family encodes as
// `Codec::to(value)` and decodes with `Codec::from(stand_in)`, leaving every
// other `T` alone (Ray's per-object serializer). `Codec` is a type with two
// static functions:
//
//     struct as_text {
//       static std::string to(const legacy_id& x) { return x.str(); }
//       static legacy_id from(std::string s) { return legacy_id::parse(s); }
//     };
//     auto msg = ferry::serializers::wrap<as_text>(id);   // wrapped<legacy_id, as_text>
//     reg.encode(msg, opts);
//
// Both ends use the same `wrapped<T, Codec>` type. The stand-in's format is
// used as it is: a family that cannot encode the stand-in cannot encode the
// wrapper.
//
// Thread-safety: a value; `Codec`'s functions must be safe to call from many
// threads.
#pragma once

#include <msgpack.hpp>

#include <type_traits>
#include <utility>

namespace ferry::serializers {

/// A `T` encoded through `Codec::to` / `Codec::from`.
template <class T, class Codec>
class wrapped {
public:
  using value_type = T;
  using stand_in_type =
    std::remove_cvref_t<decltype(Codec::to(std::declval<const T&>()))>;

  wrapped() = default;

  explicit wrapped(T value) : value_(std::move(value)) {}

  /// Returns the wrapped value.
  [[nodiscard]] T& value() noexcept { return value_; }

  /// Returns the wrapped value.
  [[nodiscard]] const T& value() const noexcept { return value_; }

  // -- cereal -----------------------------------------------------------------

  template <class Archive>
  void save(Archive& ar) const {
    ar(Codec::to(value_));
  }

  template <class Archive>
  void load(Archive& ar) {
    stand_in_type tmp{};
    ar(tmp);
    value_ = Codec::from(std::move(tmp));
  }

  // -- msgpack ----------------------------------------------------------------

  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    pk.pack(Codec::to(value_));
  }

  void msgpack_unpack(const msgpack::object& o) {
    stand_in_type tmp{};
    o.convert(tmp);
    value_ = Codec::from(std::move(tmp));
  }

  // -- CAF --------------------------------------------------------------------

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, wrapped& x) {
    if constexpr (std::is_same_v<typename Inspector::result_type, void>) {
      auto tmp = Codec::to(x.value_);
      f(tmp);
    } else if constexpr (Inspector::reads_state) {
      auto tmp = Codec::to(x.value_);
      return f(tmp);
    } else {
      stand_in_type tmp{};
      if (auto err = f(tmp))
        return err;
      x.value_ = Codec::from(std::move(tmp));
      return {};
    }
  }

private:
  T value_;
};

/// Returns `x` wrapped so that it is encoded through `Codec`.
template <class Codec, class T>
[[nodiscard]] wrapped<std::remove_cvref_t<T>, Codec> wrap(T&& x) {
  return wrapped<std::remove_cvref_t<T>, Codec>{std::forward<T>(x)};
}

} // namespace ferry::serializers
