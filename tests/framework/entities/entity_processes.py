"""Helpers of the entity tests that start processes: a throwaway PostgreSQL
server (tests/support's ferry_postgres_server)."""

import subprocess


def postgres(server_binary, database):
    """Starts a PostgreSQL server; returns the process (it stops the server
    when its stdin closes) and its location for ferry.entities.store."""
    proc = subprocess.Popen([server_binary, database], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("ready "):
        proc.stdin.close()
        proc.wait()
        raise AssertionError(f"no PostgreSQL server: {line}")
    return proc, "postgresql:" + line.removeprefix("ready ")
