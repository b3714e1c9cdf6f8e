// Spill file I/O; see spill_file.hpp.
#include "spill_file.hpp"

#include "fail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <system_error>

namespace ferry::store::detail {

namespace {

bool write_all(int fd, const std::byte* data, uint64_t size) {
  while (size > 0) {
    auto n = ::write(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

bool read_all(int fd, std::byte* data, uint64_t size) {
  while (size > 0) {
    auto n = ::read(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (n == 0) {
      errno = EIO; // file shorter than the object
      return false;
    }
    data += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace

std::optional<spill_file> parse_spill_file(std::string_view file,
                                           std::string_view store) noexcept {
  if (!file.starts_with(store) || file.size() <= store.size() ||
      file[store.size()] != '.')
    return std::nullopt;
  file.remove_prefix(store.size() + 1);
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(file.data(), file.data() + file.size(), id);
  if (ec != std::errc{} || end == file.data())
    return std::nullopt;
  auto rest = file.substr(static_cast<size_t>(end - file.data()));
  if (rest == ".spill")
    return spill_file{id, false};
  if (rest == ".spill.tmp")
    return spill_file{id, true};
  return std::nullopt;
}

std::string spill_file_path(const std::string& dir, const std::string& store,
                            uint64_t id) {
  return dir + "/" + store + "." + std::to_string(id) + ".spill";
}

caf::error write_spill_file(const std::string& store, const std::string& dir,
                            const std::string& path, const std::byte* data,
                            uint64_t size) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return fail(errc::spill_failed, "store '", store,
                  "': cannot create spill directory ", dir, ": ", ec.message());
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  }
  // The directory may live in a shared place like /tmp: only write into a
  // real directory of our own that nobody else can write to.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
    return fail(errc::spill_failed, "store '", store, "': spill directory ",
                dir,
                " is not a directory owned by this user and closed to "
                "others (mode 0700 expected); fix its owner and mode or "
                "choose another spill_directory");
  auto tmp = path + ".tmp";
  auto fd = ::open(tmp.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return fail(errc::spill_failed, "store '", store, "': cannot create ", tmp,
                ": ", errno_text(errno));
  auto ok = write_all(fd, data, size);
  auto err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail(errc::spill_failed, "store '", store, "': cannot write ", size,
                " bytes to ", path, ": ", errno_text(err),
                "; free disk space or lower spill_limit");
  }
  return caf::none;
}

bool read_spill_file(const std::string& path, std::byte* data,
                     uint64_t size) noexcept {
  auto fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  auto ok = fd >= 0 && read_all(fd, data, size);
  auto err = errno;
  if (fd >= 0)
    ::close(fd);
  errno = err; // the error of open or read, not of close
  return ok;
}

void remove_spill_files(const std::filesystem::path& dir,
                        std::string_view store,
                        const std::function<bool(const spill_file&)>& keep) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator{dir, ec};
       !ec && it != std::filesystem::directory_iterator{}; it.increment(ec)) {
    auto parsed = parse_spill_file(it->path().filename().string(), store);
    if (!parsed || keep(*parsed))
      continue;
    std::error_code ignored;
    std::filesystem::remove(it->path(), ignored);
  }
}

} // namespace ferry::store::detail
