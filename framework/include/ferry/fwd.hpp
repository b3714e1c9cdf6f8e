// Forward declarations of ferry::framework's public types.
#pragma once

namespace ferry {

class node;
class node_config;
struct link_config;
struct link_stats;
enum class compression : unsigned char;
enum class errc : unsigned char;

} // namespace ferry
