// Shared parts of the built-in family codecs. Not API.
#pragma once

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/options.hpp"

#include <caf/error.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::serializers::detail {

/// What a codec reports in its errors.
struct call_info {
  std::string_view family;
  std::string_view type_name;
  bool decoding;
  /// Encoding: whether the caller holds the value alive (gave a keep-alive),
  /// so large top-level arrays may travel as a view (see `split_encode`).
  bool views_allowed = false;
};

/// Returns the start of an error message about `info`.
std::string describe(const call_info& info);

/// Runs `f`, turning every exception into an error value that names the
/// family, the type and `where()` (frame and offset), and keeps the library's
/// own message. An exception of a type registered with
/// `registry::register_error_exception` gives the error it carries instead,
/// and so does an `error_fault`.
template <class F, class Where>
caf::error guarded(const call_info& info, F&& f, Where&& where) {
  auto failed = info.decoding ? errc::decode_failed : errc::encode_failed;
  // A pointer, not a std::string: built on every call, used only on failure.
  const char* fix = info.decoding
                      ? "; the bytes are corrupt or hostile, or the sender's "
                        "type differs from the receiver's"
                      : "; check the type's serialization functions";
  try {
    return f();
  } catch (const error_fault& e) {
    return e.err;
  } catch (const decode_fault& e) {
    return make_error(e.code, describe(info) + where() + ": " + e.what);
  } catch (const std::bad_alloc&) {
    return make_error(errc::allocation_limit_exceeded,
                      describe(info) + where() +
                        ": out of memory; the input claims more than the "
                        "machine can hold");
  } catch (const std::length_error& e) {
    return make_error(errc::length_out_of_range,
                      describe(info) + where() + ": " + e.what() + fix);
  } catch (const std::exception& e) {
    if (caf::error carried; carried_error(carried))
      return carried;
    return make_error(failed, describe(info) + where() + ": " + e.what() + fix);
  } catch (...) {
    if (caf::error carried; carried_error(carried))
      return carried;
    return make_error(failed,
                      describe(info) + where() + ": unknown exception" + fix);
  }
}

/// `guarded` for decoders that read several frames: `f(frame_index)` keeps
/// `frame_index` at the frame it is reading, which errors then name.
template <class F>
caf::error guarded_frames(const call_info& info, F&& f) {
  size_t frame_index = 0;
  return guarded(
    info, [&] { return f(frame_index); },
    [&] { return " (frame " + std::to_string(frame_index) + ")"; });
}

/// An output stream buffer appending to a byte vector, with a put area so that
/// small writes stay cheap.
class byte_sink : public std::streambuf {
public:
  explicit byte_sink(std::vector<std::byte>& out) : out_(out) { out_.clear(); }

  /// Shrinks the vector to the bytes written.
  void finish() { out_.resize(static_cast<size_t>(pptr() - pbase())); }

protected:
  int_type overflow(int_type c) override {
    grow(1);
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    auto len = static_cast<size_t>(n);
    if (len >= big_write) {
      // Append large blocks without first zero-filling the space: flush the
      // put area into the vector's size, then insert.
      out_.resize(static_cast<size_t>(pptr() - pbase()));
      auto p = reinterpret_cast<const std::byte*>(s);
      out_.insert(out_.end(), p, p + len);
      auto base = reinterpret_cast<char*>(out_.data());
      setp(base, base + out_.size());
      advance(out_.size());
      return n;
    }
    if (len == 0)
      return 0;
    if (epptr() - pptr() < n)
      grow(len);
    std::memcpy(pptr(), s, len);
    advance(len);
    return n;
  }

private:
  static constexpr size_t big_write = 64 * 1024;

  // pbump takes an int: advance in steps for more than 2 GiB.
  void advance(size_t n) {
    while (n > 0) {
      auto step = static_cast<int>(std::min<size_t>(n, size_t{1} << 30));
      pbump(step);
      n -= static_cast<size_t>(step);
    }
  }

  void grow(size_t extra) {
    auto used = static_cast<size_t>(pptr() - pbase());
    auto wanted = std::max({used + extra, used + used / 2, size_t{256}});
    out_.resize(wanted);
    auto base = reinterpret_cast<char*>(out_.data());
    setp(base, base + out_.size());
    advance(used);
  }

  std::vector<std::byte>& out_;
};

/// A `std::ostream` writing into `buf` for one encode. Building a
/// std::ostream (ios_base, its locale and facets) costs about 1,000
/// instructions, more than cereal's binary formats spend on a small value, so
/// each thread keeps one and points it at the caller's buffer; a nested
/// encode on the same thread (a user's save function that encodes) builds a
/// stream of its own. The stream's state is reset on every lease; cereal's
/// binary archives only call `rdbuf()->sputn` on it.
class ostream_lease {
public:
  explicit ostream_lease(std::streambuf* buf);

  ostream_lease(const ostream_lease&) = delete;
  ostream_lease& operator=(const ostream_lease&) = delete;

  ~ostream_lease();

  /// Returns the stream.
  std::ostream& get() noexcept { return *os_; }

private:
  std::ostream* os_;
  std::optional<std::ostream> own_;
};

/// An input stream buffer over read-only bytes.
class byte_source : public std::streambuf {
public:
  explicit byte_source(std::span<const std::byte> in) {
    auto p = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
    setg(p, p, p + in.size());
  }

  /// Returns how many bytes were consumed.
  size_t consumed() const noexcept {
    return static_cast<size_t>(gptr() - eback());
  }
};

/// Checks that `frames` has a main frame; returns an error otherwise.
caf::error require_main_frame(const call_info& info,
                              std::span<const frame> frames);

/// After a decode from a main frame: checks that the value read every other
/// of the `count` frames (its `separate` members did, see scope.hpp);
/// returns `errc::unused_frame` naming the first it did not read.
caf::error require_frames_read(const call_info& info, size_t count);

} // namespace ferry::serializers::detail
