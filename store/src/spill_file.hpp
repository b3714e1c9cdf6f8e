// Spill files on disk: their names, writing and reading them (private).
//
// An object spilled by store `<store>` lives in
// `<spill_directory>/<store>.<id>.spill`. It is written as `<...>.spill.tmp`
// and renamed, so a crash never leaves a partial file under the final name.
// Stores of one user may share the directory, so a store only ever touches
// files named exactly after itself (see `parse_spill_file`). The store only
// writes into a directory owned by this user and closed to others (0700),
// and opens files with `O_NOFOLLOW`.
//
// These functions own no segment state and take no lock: the store calls
// them with its lock released (the object being written or read is held by
// a handle meanwhile), except `remove_spill_files`, which recovery calls
// under the lock. Other processes see a spill file only once it is renamed
// to its final name.
#pragma once

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::store::detail {

/// A file of the spill directory that belongs to one store.
struct spill_file {
  /// Id of the object the file holds.
  uint64_t id;
  /// True for `<store>.<id>.spill.tmp` (being written), false for
  /// `<store>.<id>.spill`.
  bool tmp;
};

/// Returns what `file` is if it is named exactly `<store>.<id>.spill` or
/// `<store>.<id>.spill.tmp`, or nothing. The spill directory is shared by
/// all stores of a user, so a prefix match would also take the files of a
/// store named `<store>.<more>`; requiring digits and then the exact suffix
/// makes the split of a file name into store and id unambiguous.
std::optional<spill_file> parse_spill_file(std::string_view file,
                                           std::string_view store) noexcept;

/// Returns the path of the spill file of object `id` of `store` in `dir`.
std::string spill_file_path(const std::string& dir, const std::string& store,
                            uint64_t id);

/// Writes `size` bytes to `path` in `dir` (through `path.tmp` and a rename,
/// so a crash never leaves a partial file under the final name), creating
/// `dir` if needed. Errors name `store`.
[[nodiscard]] caf::error write_spill_file(const std::string& store,
                                          const std::string& dir,
                                          const std::string& path,
                                          const std::byte* data, uint64_t size);

/// Reads `size` bytes from `path` into `data`; returns false (with errno
/// set) if the file cannot be opened or is shorter than `size`.
[[nodiscard]] bool read_spill_file(const std::string& path, std::byte* data,
                                   uint64_t size) noexcept;

/// Removes the files of `store` in `dir` for which `keep` returns false,
/// and nothing of other stores. Errors (no such directory, a file that
/// cannot be removed) are ignored.
void remove_spill_files(const std::filesystem::path& dir,
                        std::string_view store,
                        const std::function<bool(const spill_file&)>& keep);

} // namespace ferry::store::detail
