// Runs Debian's Python (FERRY_SYSTEM_PYTHON, with python3-msgpack) on a
// script and an input file, for the interop tests.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <unistd.h>

namespace ferry::serializers::test {

/// Writes `bytes` to a new temporary file; returns its path, or an empty
/// string on failure.
inline std::string temp_file_with(std::span<const std::byte> bytes) {
  char path[] = "/tmp/ferry_interop_XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0)
    return {};
  auto written = ::write(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(bytes.size())) {
    ::unlink(path);
    return {};
  }
  return path;
}

/// Runs `script` with the path of a file holding `input` as sys.argv[1];
/// returns what it printed (stdout and stderr), trailing newlines removed.
inline std::string run_python(const std::string& script,
                              std::span<const std::byte> input) {
  auto script_path = temp_file_with(std::as_bytes(std::span{script}));
  auto input_path = temp_file_with(input);
  std::string out;
  if (script_path.empty() || input_path.empty()) {
    out = "cannot write a temporary file";
  } else {
    std::string cmd = std::string{FERRY_SYSTEM_PYTHON} + " " + script_path
                      + " " + input_path + " 2>&1";
    if (auto pipe = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0)
        out.append(buf, n);
      ::pclose(pipe);
    }
  }
  if (!script_path.empty())
    ::unlink(script_path.c_str());
  if (!input_path.empty())
    ::unlink(input_path.c_str());
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

} // namespace ferry::serializers::test
