#!/usr/bin/env python3
"""Checks that the test suite leaves no unused ferry store in /dev/shm.

A ferry store is a POSIX shared-memory segment /dev/shm/<name>; the last
process that leaves a store removes it (unless it was made persistent). This
script brackets a ctest run as a fixture:

  shm_leftovers.py start MARKER   records when the run began (MARKER's mtime)
  shm_leftovers.py check MARKER   fails, naming each, if a segment of this
                                  user whose name starts with "ferry" was
                                  created since MARKER and no process maps
                                  it any more

Segments that live processes still map (another run, a service) and those
older than the run are none of the suite's business. A segment is looked at
twice, a second apart, so one whose creator is between creating and mapping
it is not taken for a leftover.
"""
import os
import sys
import time

SHM = "/dev/shm"


def candidates(since):
    uid = os.getuid()
    found = []
    for name in sorted(os.listdir(SHM)):
        if not name.startswith("ferry"):
            continue
        try:
            st = os.stat(os.path.join(SHM, name))
        except FileNotFoundError:
            continue
        if st.st_uid == uid and st.st_ctime >= since:
            found.append((name, st.st_ino))
    return found


def mapped_inodes():
    """Inodes of /dev/shm files that some process of any user maps."""
    inodes = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].startswith(SHM + "/"):
                        inodes.add(int(fields[4]))
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return inodes


def unused(since):
    inodes = mapped_inodes()
    return [(n, i) for n, i in candidates(since) if i not in inodes]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "check"):
        print("usage: shm_leftovers.py start|check MARKER", file=sys.stderr)
        return 2
    marker = sys.argv[2]
    if sys.argv[1] == "start":
        os.makedirs(os.path.dirname(os.path.abspath(marker)), exist_ok=True)
        with open(marker, "w") as out:
            out.write("ferry test run\n")
        print(f"run started; segments created from now on are checked")
        return 0
    since = os.stat(marker).st_mtime - 1
    first = unused(since)
    if first:
        time.sleep(1)
        again = {n for n, _ in unused(since)}
        first = [(n, i) for n, i in first if n in again]
    if not first:
        print(f"no unused ferry store in {SHM} created by this run")
        return 0
    for name, _ in first:
        size = os.stat(os.path.join(SHM, name)).st_size
        print(f"{SHM}/{name} ({size} bytes): created by this run and used "
              f"by no process; the test or sample that made it left it "
              f"behind (remove it with `ferry-store --name {name} remove`)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
