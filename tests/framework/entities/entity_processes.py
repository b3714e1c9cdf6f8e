"""Helpers of the entity tests that start processes: a throwaway PostgreSQL
server (tests/support's ferry_postgres_server)."""

import subprocess


def postgres(server_binary, database, prefix=(), listen=None):
    """Starts a PostgreSQL server; returns the process (it stops the server
    when its stdin closes; `stop` and `start` lines take it down and bring
    it back) and its location for ferry.entities.store. `prefix` runs the
    server elsewhere (`ip netns exec NS`), and `listen` makes it take TCP
    connections at that address, which the location then names."""
    command = [*prefix, server_binary]
    if listen:
        command.append(f"--listen={listen}")
    proc = subprocess.Popen([*command, database], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    line = proc.stdout.readline().strip()
    if not line.startswith("ready "):
        proc.stdin.close()
        proc.wait()
        raise AssertionError(f"no PostgreSQL server: {line}")
    return proc, "postgresql:" + line.removeprefix("ready ")
