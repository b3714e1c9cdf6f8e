// The names of member statuses (see ferry/cluster_events.hpp).
#include "ferry/cluster_events.hpp"

namespace ferry {

const char* to_string(member_status x) {
  switch (x) {
  case member_status::joining:
    return "joining";
  case member_status::up:
    return "up";
  case member_status::leaving:
    return "leaving";
  case member_status::exiting:
    return "exiting";
  case member_status::down:
    return "down";
  case member_status::removed:
    return "removed";
  }
  return "unknown";
}

} // namespace ferry
