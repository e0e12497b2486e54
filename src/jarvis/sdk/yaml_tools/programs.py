"""How programs that run code read their argv: interpreters and launchers.

A `Grammar` says, for one program, which options take an argument (data or code), and
what its operands are:

- `data`: plain arguments;
- `script`: the first operand is a file the program runs (`python FILE`, `sh FILE`);
- `code`: the first operand is program text (`awk PROGRAM`, `sed SCRIPT`);
- `command`: after `skip` fixed operands, the next operand is a program to run and the
  rest is that program's argv (`env`, `nice`, `timeout 5`, `busybox`, `xargs`);
- `shell`: after `skip` operands, the rest is joined into shell code (`ssh HOST`, `watch`);
- `find`: `find`'s expression, where `-exec CMD ... ;` runs a command.

An option that gives the main code (`python -c`, `perl -e`, `awk -f`: `given_by`) makes
every operand data. Only the options that take an argument are listed: any other option
is read as a flag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

__all__ = ["Grammar", "grammar_for", "is_code_variable"]

Operands = Literal["data", "script", "code", "command", "shell", "find"]


@dataclass(frozen=True)
class Grammar:
    """The parts of a program's argv that decide what it runs."""

    operands: Operands = "data"
    data_options: frozenset[str] = frozenset()
    code_options: frozenset[str] = frozenset()
    # sh -c: a flag that makes the first operand code (the code is not the option's argument).
    code_flags: frozenset[str] = frozenset()
    # python -c / -m: nothing after the option's argument is read as an option.
    ending_options: frozenset[str] = frozenset()
    # Options that give the main code, so no operand is a script or program text.
    given_by: frozenset[str] = frozenset()
    skip: int = 0
    # Interpreters: any option may load code (--rcfile, -M, --require), so no value there.
    options_run_code: bool = False
    plus_options: bool = False  # sh +x, +o name
    # perl -n / -p: operands are opened with a two-argument open, where "cmd|" runs cmd.
    open_flags: frozenset[str] = frozenset()
    assignments: bool = False  # env NAME=value ... COMMAND
    dashdash_ends_options: bool = True

    @property
    def is_interpreter(self) -> bool:
        return self.options_run_code or self.operands == "code"


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_SHELL = Grammar(
    "script", data_options=_set("-o", "+o", "-O", "+O", "--rcfile", "--init-file"),
    code_flags=_set("-c"), options_run_code=True, plus_options=True,
)
_FISH = Grammar("script", code_options=_set("-c", "--command", "-C", "--init-command"),
                given_by=_set("-c", "--command"), options_run_code=True)
_PYTHON = Grammar(
    "script", data_options=_set("-W", "-X", "--check-hash-based-pycs"),
    code_options=_set("-c", "-m"), ending_options=_set("-c", "-m"), given_by=_set("-c", "-m"),
    options_run_code=True,
)
_PERL = Grammar(
    "script", data_options=_set("-I"), code_options=_set("-e", "-E", "-M", "-m"),
    given_by=_set("-e", "-E"), options_run_code=True, open_flags=_set("-n", "-p"),
)
_RUBY = Grammar(
    "script", data_options=_set("-I", "-C", "-E", "--encoding"),
    code_options=_set("-e", "-r", "--require"), given_by=_set("-e"), options_run_code=True,
)
_NODE = Grammar(
    "script", data_options=_set("--title", "--input-type", "-C", "--conditions"),
    code_options=_set("-e", "--eval", "-p", "--print", "-r", "--require", "--import",
                      "--loader", "--experimental-loader"),
    given_by=_set("-e", "--eval", "-p", "--print"), options_run_code=True,
)
_PHP = Grammar("script", code_options=_set("-r", "-B", "-R", "-E", "-F", "-f", "-c", "-d", "-z"),
               given_by=_set("-r", "-B", "-R", "-E", "-F", "-f"), options_run_code=True)
_LUA = Grammar("script", code_options=_set("-e", "-l"), options_run_code=True)
_EVAL_E = Grammar(
    "script", code_options=_set("-e", "--eval", "-E", "--print", "-L", "--load", "--expr"),
    given_by=_set("-e", "--eval", "-E", "--print", "--expr"), options_run_code=True,
)
_AWK = Grammar(
    "code", data_options=_set("-v", "--assign", "-F", "--field-separator"),
    code_options=_set("-f", "--file", "-e", "--source", "-i", "--include", "-l", "--load",
                      "-E", "--exec"),
    given_by=_set("-f", "--file", "-e", "--source", "-E", "--exec"),
)
_SED = Grammar(
    "code", data_options=_set("-l", "--line-length"),
    code_options=_set("-e", "--expression", "-f", "--file"),
    given_by=_set("-e", "--expression", "-f", "--file"),
)
_DC = Grammar("script", code_options=_set("-e", "--expression", "-f", "--file"))


def _launcher(*data: str, skip: int = 0, code: tuple[str, ...] = (), **kw: bool) -> Grammar:
    return Grammar("command", data_options=_set(*data), code_options=_set(*code), skip=skip, **kw)


_LAUNCHERS: dict[str, Grammar] = {
    "env": _launcher("-u", "--unset", "-C", "--chdir", "-P", code=("-S", "--split-string"),
                     assignments=True),
    "nice": _launcher("-n", "--adjustment"),
    "timeout": _launcher("-s", "--signal", "-k", "--kill-after", skip=1),
    "stdbuf": _launcher("-i", "-o", "-e", "--input", "--output", "--error"),
    "ionice": _launcher("-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid",
                        "-u", "--uid"),
    "chrt": _launcher("-T", "-P", "-D", "--sched-runtime", "--sched-period",
                      "--sched-deadline", skip=1),
    "taskset": _launcher(skip=1),
    "chroot": _launcher("--userspec", "--groups", skip=1),
    "flock": _launcher("-w", "--wait", "--timeout", "-E", "--conflict-exit-code",
                       code=("-c", "--command"), skip=1),
    "sudo": _launcher("-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt",
                      "-C", "--close-from", "-D", "--chdir", "-r", "--role", "-t", "--type",
                      "-T", "--command-timeout", "-U", "--other-user"),
    "doas": _launcher("-u", "-C"),
    "pkexec": _launcher("--user"),
    "time": _launcher("-f", "--format", "-o", "--output"),
    "strace": _launcher("-e", "-o", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O",
                        "-S", "-U", "-X", "--output"),
    "ltrace": _launcher("-e", "-o", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n",
                        "-x", "--output"),
    "xargs": _launcher("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L",
                       "--max-lines", "-n", "--max-args", "-P", "--max-procs", "-s",
                       "--max-chars", "--process-slot-var"),
    "systemd-run": _launcher("-p", "--property", "-E", "--setenv", "-u", "--unit", "-M",
                             "--machine", "-H", "--host", "--uid", "--gid", "--nice",
                             "--working-directory", "--description", "--slice"),
    "unshare": _launcher("-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"),
    "nsenter": _launcher("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "-w"),
    "cgexec": _launcher("-g"),
    "cpulimit": _launcher("-l", "--limit", "-p", "--pid", "-e", "--exe"),
    "sshpass": _launcher("-p", "-f", "-d", "-P"),
    "faketime": _launcher(skip=1),
    "firejail": _launcher(),
    "valgrind": _launcher(),
    "busybox": _launcher(),
    "toybox": _launcher(),
    **{name: _launcher() for name in (
        "nohup", "setsid", "unbuffer", "rlwrap", "eatmydata", "nocache", "proxychains",
        "torsocks", "xvfb-run", "dbus-run-session", "catchsegv", "caffeinate", "command",
        "builtin", "exec", "arch", "prlimit", "setpriv", "tsocks", "daemonize",
    )},
}

_SHELL_RUNNERS: dict[str, Grammar] = {
    "ssh": Grammar("shell", skip=1, code_options=_set("-o", "-F"), data_options=_set(
        "-b", "-c", "-D", "-E", "-e", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-p", "-Q",
        "-R", "-S", "-W", "-w", "-B")),
    "watch": Grammar("shell", data_options=_set("-n", "--interval", "-q", "--equexit")),
    "parallel": Grammar("shell", data_options=_set("-j", "--jobs", "-S", "--sshlogin")),
    "su": Grammar("shell", data_options=_set("-g", "--group", "-G", "--supp-group", "-w"),
                  code_options=_set("-c", "--command", "-s", "--shell", "--session-command")),
    "runuser": Grammar("shell", data_options=_set("-u", "--user", "-g", "--group", "-G", "-w"),
                       code_options=_set("-c", "--command", "-s", "--shell")),
    "sg": Grammar("shell", skip=1, code_options=_set("-c")),
    "script": Grammar("data", code_options=_set("-c", "--command")),
    # Programs whose options name a command to run or a file of commands.
    "git": Grammar(code_options=_set("-c", "--config-env", "--exec-path")),
    "rsync": Grammar(code_options=_set("-e", "--rsh", "--rsync-path")),
    "tar": Grammar(code_options=_set("-I", "--use-compress-program", "--to-command", "-F",
                                     "--info-script", "--new-volume-script",
                                     "--checkpoint-action")),
    "zip": Grammar(code_options=_set("-TT", "--unzip-command")),
    "scp": Grammar(code_options=_set("-o", "-S", "-F")),
    "sftp": Grammar(code_options=_set("-o", "-S", "-F", "-D", "-b")),
    "man": Grammar(code_options=_set("-P", "--pager", "-H", "--html")),
    "make": Grammar(code_options=_set("-f", "--file", "--makefile", "--eval")),
    "find": Grammar("find", dashdash_ends_options=False),
}

_GRAMMARS: dict[str, Grammar] = {
    **{name: _SHELL for name in (
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "oksh", "ash", "hush", "yash",
        "posh", "rbash", "csh", "tcsh", "ksh93",
    )},
    "fish": _FISH,
    **{name: _PYTHON for name in ("python", "pypy", "jython", "ipython")},
    "perl": _PERL,
    "ruby": _RUBY, "jruby": _RUBY,
    "node": _NODE, "nodejs": _NODE, "bun": _NODE,
    "php": _PHP, "php-cgi": _PHP,
    "lua": _LUA, "luajit": _LUA, "texlua": _LUA,
    "julia": _EVAL_E, "rscript": _EVAL_E, "osascript": _EVAL_E,
    "tclsh": Grammar("script", options_run_code=True),
    "wish": Grammar("script", options_run_code=True),
    **{name: _AWK for name in ("awk", "gawk", "mawk", "nawk", "original-awk", "busybox-awk")},
    "sed": _SED, "gsed": _SED,
    "dc": _DC,
    **_LAUNCHERS,
    **_SHELL_RUNNERS,
}

_VERSION = re.compile(r"[-.]?[0-9][0-9.]*$")


def grammar_for(program: str) -> Grammar | None:
    """The grammar of a program named by path or bare name (python3.11 reads as python)."""
    name = PurePath(program).name.lower().removesuffix(".exe")
    if not name:
        return None
    found = _GRAMMARS.get(name)
    if found is None:
        found = _GRAMMARS.get(_VERSION.sub("", name))
    return found


# Environment variables that load code, choose a program or hand text to a shell.
_CODE_VARIABLES = frozenset({
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "BASH_ENV", "ENV",
    "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "ZDOTDIR", "SHELL", "IFS",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS",
    "NODE_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS",
    "PYTHONBREAKPOINT", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "CLASSPATH", "R_PROFILE", "R_PROFILE_USER", "TCLLIBPATH", "EDITOR",
    "VISUAL", "PAGER", "MANPAGER", "GIT_PAGER", "GIT_EDITOR", "GIT_SSH", "GIT_EXEC_PATH",
    "LESSOPEN", "LESSCLOSE", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_ASKPASS",
    "GIT_CONFIG_PARAMETERS", "RSYNC_RSH", "AWKPATH", "AWKLIBPATH",
})
_CODE_VARIABLE_ENDINGS = ("_COMMAND", "_CMD", "_PRELOAD", "_OPTIONS", "_OPT")


def is_code_variable(name: str) -> bool:
    """Whether a program may run the variable's text, or load code or a program from it."""
    return name in _CODE_VARIABLES or name.endswith(_CODE_VARIABLE_ENDINGS)
