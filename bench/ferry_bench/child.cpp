// A peer process on two pipes (see child.hpp).
#include "child.hpp"

namespace ferry::bench {

// /proc/self/exe runs this very image even if the file was replaced since
// (e.g. rebuilt while a long run goes on).
child::child(const std::vector<std::string>& args)
  : process_("/proc/self/exe", args) {
  // nop
}

child::~child() {
  process_.close_stdin();
  if (process_.running())
    process_.wait(std::chrono::seconds{10});
}

std::optional<std::string> child::ask(const std::string& line,
                                      const std::string& prefix,
                                      std::chrono::milliseconds timeout) {
  process_.write_line(line);
  return process_.wait_for(prefix, timeout);
}

} // namespace ferry::bench
