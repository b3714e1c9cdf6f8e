#include "ferry/store/log.hpp"

#include "ferry/store/detail/thread_safety.hpp"

#include <cstdio>
#include <string>
#include <utility>

namespace ferry::store {

namespace {

detail::mutex log_mtx;

log_hook& current_hook() FERRY_REQUIRES(log_mtx) {
  static log_hook instance;
  return instance;
}

} // namespace

log_hook set_log_hook(log_hook hook) {
  detail::lock_guard guard{log_mtx};
  return std::exchange(current_hook(), std::move(hook));
}

void log_warning(std::string_view line) {
  log_hook hook;
  {
    detail::lock_guard guard{log_mtx};
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
