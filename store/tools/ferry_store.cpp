// ferry-store: looks into the shared-memory object store of this host.
//
//     ferry-store [--name NAME] [list]   objects, holders and totals
//     ferry-store [--name NAME] reap     frees the counts of dead processes
//     ferry-store [--name NAME] remove   removes the segment and spill files
//     ferry-store help [COMMAND]         what each command and column means
//
// `--help` prints the whole text, `help COMMAND` or `COMMAND --help` one
// command's; the text shows the defaults as they resolve for the user who
// runs it. The tool attaches without prefaulting and never creates a store.
// Exit status: 0 done, 1 the store could not be opened or changed, 2 a wrong
// command line (the message names the argument and points at --help).
// Single-threaded.
#include "ferry/store/errc.hpp"
#include "ferry/store/object_store.hpp"

#include <unistd.h>

#include <array>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

namespace {

using ferry::store::store_config;

constexpr std::array<std::string_view, 4> commands{"list", "reap", "remove",
                                                   "help"};

bool is_command(std::string_view x) {
  for (auto c : commands)
    if (c == x)
      return true;
  return false;
}

std::string command_list() {
  std::string result;
  for (auto c : commands) {
    if (!result.empty())
      result += ", ";
    result += c;
  }
  return result;
}

/// Returns `text` with `{name}` and `{spill}` replaced by the defaults as
/// they resolve for this user.
std::string with_defaults(std::string text) {
  auto replace = [&](std::string_view key, const std::string& value) {
    for (auto pos = text.find(key); pos != std::string::npos;
         pos = text.find(key, pos + value.size()))
      text.replace(pos, key.size(), value);
  };
  replace("{name}", store_config::default_name());
  replace("{spill}", store_config::default_spill_directory());
  return text;
}

constexpr std::string_view list_text =
  R"txt(  list     (the default) prints one row per object of the store, ordered by
           id, then the store's totals. Opening the store first reaps dead
           processes (see reap); the tool leaves itself out of the list.
           columns:
             OBJECT ID  the object's id (what handles and tickets name)
             SIZE       payload bytes
             REFS       references on the whole host: the sum of the four
                        HOLDERS counts of every process
             STATE      sealed (written, immutable) or creating (a builder
                        still writes it)
             PINNED     yes if a process serialized a handle to it outside
                        ferry's messages: it stays until that process exits
             SPILLED    yes if it lives in a spill file, not in memory
             HOLDERS    per process, "pid: handles/in-transit/pins/parked":
                        handles: live object_refs and shared_arrays (a
                          builder not yet sealed counts as one);
                        in-transit: references the process exported in
                          transfer tickets not yet redeemed (messages on
                          their way to another process);
                        pins: 1 if that process pinned it (see PINNED);
                        parked: live parked_refs, which let the store
                          spill the object
           totals:
             capacity            bytes for objects
             used                memory taken by resident objects (with
                                 their block headers)
             pinned              memory that cannot be spilled now: objects
                                 being created or viewed by a live handle
             largest free block  the largest object that fits now without
                                 spilling
             spilled A of B in DIR
                                 bytes in spill files, their bound, and the
                                 spill directory, which the store's creator
                                 chose (default: {spill},
                                 that is $TMPDIR/ferry-spill-<uid>, or
                                 /tmp/ferry-spill-<uid> without TMPDIR)
             lock recoveries     times a process found the store's lock
                                 held by a dead process and repaired it
             processes           attached processes by pid; "(dead)" marks
                                 one that died and is not reaped yet
)txt";

constexpr std::string_view reap_text =
  R"txt(  reap     frees the references held by attached processes that have died
           (killed, crashed), and the objects only they held, and prints how
           many processes it reaped. Every process that opens the store does
           the same (this tool too, whatever the command) and nodes do it
           every second, so it matters where no node runs; a store that is
           not persistent then goes with the tool.
)txt";

constexpr std::string_view remove_text =
  R"txt(  remove   deletes the store: its segment in /dev/shm and its spill files.
           Processes still attached keep their mapping; the next process
           that attaches creates a new, empty store. For a persistent store,
           or one that nodes still use (run it when none does).
)txt";

constexpr std::string_view help_text =
  R"txt(  help     prints this text; `help COMMAND` (or `COMMAND --help`) prints
           one command's.
)txt";

constexpr std::string_view usage_text =
  R"txt(usage: ferry-store [--name NAME] [list | reap | remove]
       ferry-store help [COMMAND]
       ferry-store COMMAND --help
)txt";

constexpr std::string_view intro_text =
  R"txt(ferry-store: looks into this host's ferry object store and tidies it up.

A store is a shared-memory segment (/dev/shm/NAME) that the ferry nodes and
programs of one user on this host share. The last process to leave it
removes it, unless its creator made it persistent (ferry.store.persistent);
a store whose last process was killed stays until a process attaches and
leaves again. The tool opens an existing store without faulting its memory
in, never creates one, and leaves it like any other process: last out of a
store that is not persistent, it removes it.

)txt";

constexpr std::string_view options_text = R"txt(
options:
  --name NAME   the store to open (default: {name}, that is ferry-<uid>,
                the default of a node's ferry.store.name)
  -h, --help    prints this text, or one command's after COMMAND

commands:
)txt";

constexpr std::string_view exit_text = R"txt(
exit status: 0 done; 1 the store could not be opened or changed (the message
says why, e.g. there is no store of that name); 2 a wrong command line.
)txt";

std::string command_help(std::string_view command) {
  if (command == "list")
    return with_defaults(std::string{list_text});
  if (command == "reap")
    return std::string{reap_text};
  if (command == "remove")
    return std::string{remove_text};
  return std::string{help_text};
}

std::string one_command_help(std::string_view command) {
  auto line =
    command == "help"
      ? std::string{"usage: ferry-store help [COMMAND]\n"}
      : "usage: ferry-store [--name NAME] " + std::string{command} + "\n";
  return line + "\n" + command_help(command);
}

std::string full_help() {
  auto result = std::string{intro_text} + std::string{usage_text} +
                with_defaults(std::string{options_text});
  for (auto c : commands)
    result += command_help(c);
  return result + std::string{exit_text};
}

/// Prints `what` as a command-line error and returns exit code 2.
int usage_error(const std::string& what) {
  std::cerr << "ferry-store: " << what
            << "; run `ferry-store --help` for the commands and options\n";
  return 2;
}

int fail(const caf::error& err) {
  std::cerr << "ferry-store: " << ferry::store::render(err) << '\n';
  return 1;
}

struct command_line {
  std::string name = store_config::default_name();
  std::string command = "list";
  std::optional<std::string> given; // the command as given, if any
  std::optional<std::string> topic; // the COMMAND of `help COMMAND`
  bool help = false;
};

int unknown_command(const std::string& arg) {
  return usage_error("unknown command '" + arg +
                     "' (commands: " + command_list() + ")");
}

/// Parses `argv`; returns an exit code for a wrong command line.
std::optional<int> parse(int argc, char** argv, command_line& out) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
    } else if (arg == "--name") {
      if (i + 1 >= argc)
        return usage_error("option --name needs a value (the store's name)");
      out.name = argv[++i];
    } else if (arg.starts_with("--name=")) {
      out.name = arg.substr(7);
    } else if (arg.starts_with("-")) {
      return usage_error("unknown option '" + arg +
                         "' (options: --name NAME, --help)");
    } else if (!out.given) {
      if (!is_command(arg))
        return unknown_command(arg);
      out.given = arg;
      out.command = arg;
    } else if (out.command == "help" && !out.topic) {
      if (!is_command(arg))
        return unknown_command(arg);
      out.topic = arg;
    } else {
      return usage_error("unexpected argument '" + arg + "' after command '" +
                         out.command + "'");
    }
  }
  if (out.name.empty())
    return usage_error("option --name needs a value (the store's name)");
  return std::nullopt;
}

} // namespace

int main(int argc, char** argv) {
  command_line cl;
  if (auto code = parse(argc, argv, cl))
    return *code;
  if (cl.command == "help" || cl.help) {
    if (cl.topic)
      std::cout << one_command_help(*cl.topic);
    else if (cl.given && cl.command != "help")
      std::cout << one_command_help(cl.command);
    else
      std::cout << full_help();
    return 0;
  }
  if (cl.command == "remove") {
    if (auto err = ferry::store::object_store::remove(cl.name))
      return fail(err);
    std::cout << "removed store '" << cl.name << "'\n";
    return 0;
  }
  store_config cfg;
  cfg.name = cl.name;
  cfg.open_only = true;
  cfg.prefault = false;
  cfg.reaper_interval = std::chrono::milliseconds{0};
  auto store = ferry::store::object_store::attach(cfg);
  if (!store)
    return fail(store.error());
  if (cl.command == "reap") {
    auto reaped = store->reap();
    if (!reaped)
      return fail(reaped.error());
    std::cout << "reaped " << store->reaped_at_attach() + *reaped
              << " dead process(es)\n";
    return 0;
  }
  auto summary = store->memory_summary();
  if (!summary)
    return fail(summary.error());
  // This tool attached only to look: leave itself out of the list.
  std::erase_if(summary->processes, [](const ferry::store::process_info& x) {
    return x.pid == static_cast<int32_t>(::getpid());
  });
  std::cout << to_string(*summary);
  return 0;
}
