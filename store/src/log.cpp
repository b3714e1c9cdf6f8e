#include "ferry/store/log.hpp"

#include <cstdio>
#include <mutex>
#include <utility>
#include <string>

namespace ferry::store {

namespace {

std::mutex log_mtx;

log_hook& current_hook() {
  static log_hook instance;
  return instance;
}

} // namespace

log_hook set_log_hook(log_hook hook) {
  std::lock_guard guard{log_mtx};
  return std::exchange(current_hook(), std::move(hook));
}

void log_warning(std::string_view line) {
  log_hook hook;
  {
    std::lock_guard guard{log_mtx};
    hook = current_hook();
  }
  if (hook) {
    hook(line);
    return;
  }
  std::string text{line};
  text += '\n';
  std::fputs(text.c_str(), stderr);
}

} // namespace ferry::store
