// Polling with a deadline: the one way ferry's tests wait for something
// another thread or process does.
//
// `eventually(pred)` calls `pred` until it returns true or the timeout
// passes, pausing `step` between calls, and returns its last answer. Tests
// never sleep to let time pass (timers and rate limits take an injected
// clock instead); they poll for the state they expect, and the timeout only
// bounds a failing run. Header only, no dependencies beyond the standard
// library.
#pragma once

#include <chrono>
#include <thread>

namespace ferry::test {

/// Calls `pred` until it returns true or `timeout` passed; returns whether
/// it did.
template <class Pred>
bool eventually(Pred&& pred,
                std::chrono::steady_clock::duration timeout
                = std::chrono::seconds{30},
                std::chrono::steady_clock::duration step
                = std::chrono::milliseconds{5}) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (pred())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return pred();
    std::this_thread::sleep_for(step);
  }
}

} // namespace ferry::test
