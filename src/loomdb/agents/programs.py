"""Running a configured program: a minimal environment and a time limit.

A program (a tools.toml tool, or an MCP server) gets only PATH, HOME and LANG of
loomdb's own environment (the settings the edge read: `Runtime.environ`, never the
process's read here) plus what its entry names in `env`: the provider keys and
anything else loomdb was started with stay out unless the operator passes them on.
It runs in its own process group, and when it takes longer than its limit the whole
group is killed (a shell's children too), so nothing it started outlives the call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

from .config import Program

#: the variables of loomdb's own environment a program inherits
INHERITED = ("PATH", "HOME", "LANG")


def environment(program: Program, environ: Mapping[str, str] | None) -> dict[str, str]:
    """The environment a program starts with: the inherited variables of `environ`
    (the settings' environment; None: none) and the entry's own."""
    base = environ or {}
    return {**{k: base[k] for k in INHERITED if k in base}, **program.env}


def seconds(program: Program, default: float) -> float:
    """The program's own time limit, else the store's `limits.tool_seconds`."""
    return program.timeout if program.timeout is not None else default


class TimedOut(Exception):
    """A program ran past its time limit; its process group was killed."""


def run(argv: tuple[str, ...], program: Program, args: dict[str, Any], *, timeout: float,
        environ: Mapping[str, str] | None) -> subprocess.CompletedProcess[str]:
    """Run `argv` with the call's input as JSON on stdin; its output, or TimedOut."""
    proc = subprocess.Popen(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=environment(program, environ), cwd=program.cwd, start_new_session=True,
    )
    try:
        out, err = proc.communicate(json.dumps(args), timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise TimedOut(f"ran longer than {timeout:g} s and was stopped") from None
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the process and everything in its group, and reap it. Its pipes are closed
    unread: a child that left the group may still hold them open."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
