// The start the chaos processes share: see process_flags.hpp.
#include "process_flags.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <sstream>

namespace ferry::chaos {

std::string take_flags(
  std::vector<std::string>& args, process_flags& common,
  const std::function<bool(const std::string&, const std::string&)>& own) {
  std::vector<std::string> rest;
  for (auto& arg : args) {
    if (arg.rfind("--chaos-", 0) != 0) {
      rest.push_back(arg);
      continue;
    }
    auto eq = arg.find('=');
    auto key = arg.substr(8, eq == std::string::npos ? eq : eq - 8);
    auto value = eq == std::string::npos ? std::string{} : arg.substr(eq + 1);
    try {
      if (key == "index") {
        common.index = std::stoul(value);
      } else if (key == "hosts") {
        std::istringstream in{value};
        for (std::string host; std::getline(in, host, ',');)
          common.hosts.push_back(host);
      } else if (key == "port") {
        common.port = static_cast<uint16_t>(std::stoul(value));
      } else if (key == "history") {
        common.history_dir = value;
      } else if (key == "stderr") {
        common.stderr_file = value;
      } else if (!own(key, value)) {
        return "unknown flag " + arg;
      }
    } catch (const std::exception&) {
      return "flag " + arg + " needs a number";
    }
  }
  args = std::move(rest);
  if (common.index >= common.hosts.size())
    return "--chaos-index must name one of --chaos-hosts";
  return {};
}

void redirect_stderr(const std::string& file) {
  if (file.empty())
    return;
  auto fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                   0644);
  if (fd >= 0) {
    ::dup2(fd, 2);
    ::close(fd);
  }
}

caf::error parse_config(ferry::node_config& cfg, const char* program,
                        std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(program)};
  for (auto& arg : args)
    argv.push_back(arg.data());
  return cfg.parse(static_cast<int>(argv.size()), argv.data());
}

} // namespace ferry::chaos
