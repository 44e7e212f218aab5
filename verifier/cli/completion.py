"""``netproof completion bash|zsh``: print a shell completion script.

The script completes the commands, each command's options (and the choices of an option that
has them, e.g. ``--backend``), and construction names (with ``*.py`` user modules and ``*.json``
network files) where a command takes a construction; it is generated from the parser, so it
stays in step with the commands. Install it once:

    netproof completion bash > ~/.local/share/bash-completion/completions/netproof   # bash
    netproof completion zsh > "${fpath[1]}/_netproof"                                   # zsh

(or ``eval "$(netproof completion bash)"`` in ``~/.bashrc``, ``source <(netproof completion
zsh)`` in ``~/.zshrc``). No dependency: the scripts use the shells' own ``complete`` and
``compadd``.

May import the campaign's sources (the construction names) and argparse.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.sources import Session

__all__ = ["SHELLS", "add_parser", "completion_script"]

SHELLS = ("bash", "zsh")

_TAKES_CONSTRUCTIONS = frozenset({"name", "names"})
"""Dests of a first positional argument that is a construction (or several)..."""

_NOT_CONSTRUCTIONS = frozenset({"new", "compile"})
"""... except in these commands (``new NAME`` names a new one, ``compile`` takes a program file)."""


def add_parser(sub: Any, root: argparse.ArgumentParser) -> None:
    """Register ``netproof completion`` on the CLI's subparsers; ``root`` is the whole parser,
    read when the script is printed."""
    p = sub.add_parser("completion", help="print a shell completion script (bash or zsh)")
    p.add_argument("shell", choices=SHELLS, help="the shell: bash or zsh")
    p.set_defaults(func=lambda args, session: _cmd_completion(args, session, root))


def _cmd_completion(
    args: argparse.Namespace, session: Session, root: argparse.ArgumentParser
) -> int:
    print(completion_script(root, args.shell, list(session.registry())), end="")
    return EXIT_OK


def _commands(root: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    for action in root._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(
    p: argparse.ArgumentParser,
) -> tuple[list[str], dict[str, list[str]], list[str] | None]:
    """A command's option strings, the choices of each option that has them, and the choices of
    its first positional argument (None: it has none)."""
    options: list[str] = []
    choices: dict[str, list[str]] = {}
    positionals: list[argparse.Action] = []
    for a in p._actions:
        if not a.option_strings:
            positionals.append(a)
            continue
        options.extend(a.option_strings)
        if a.choices is not None and a.nargs != 0:
            for o in a.option_strings:
                choices[o] = [str(c) for c in a.choices]
    first = positionals[0].choices if positionals else None
    return options, choices, None if first is None else [str(c) for c in first]


def _words(items: Iterable[str]) -> str:
    return " ".join(items)


def completion_script(root: argparse.ArgumentParser, shell: str, names: Sequence[str]) -> str:
    """The completion script for ``shell`` (``bash`` or ``zsh``) of the parser ``root``, with
    the construction names ``names``."""
    if shell not in SHELLS:
        raise ValueError(f"shell={shell!r}: choose one of {', '.join(SHELLS)}")
    commands = _commands(root)
    top = [o for a in root._actions for o in a.option_strings]
    opt_cases, choice_cases, name_cmds = [], [], []
    for cmd, p in commands.items():
        options, choices, first = _options(p)
        opt_cases.append(f"        {cmd}) opts='{_words(options)}' ;;")
        for o, cs in choices.items():
            choice_cases.append(f"        '{cmd} {o}') choices='{_words(cs)}' ;;")
        if first is not None:
            choice_cases.append(f"        '{cmd} {cmd}') choices='{_words(first)}' ;;")
        dests = [a.dest for a in p._actions if not a.option_strings]
        if dests and dests[0] in _TAKES_CONSTRUCTIONS and cmd not in _NOT_CONSTRUCTIONS:
            name_cmds.append(cmd)
    body = BASH if shell == "bash" else ZSH
    return (
        body.replace("@COMMANDS@", _words(commands))
        .replace("@TOP@", _words(top))
        .replace("@NAMES@", _words(names))
        .replace("@NAME_COMMANDS@", "|".join(name_cmds) or "''")
        .replace("@OPTION_CASES@", "\n".join(opt_cases))
        .replace("@CHOICE_CASES@", "\n".join(choice_cases) or "        '') ;;")
    )


BASH = r"""# bash completion for netproof (netproof completion bash)
_netproof() {
    local cur prev cmd opts choices
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev=""
    (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
    if (( COMP_CWORD == 1 )); then
        COMPREPLY=( $(compgen -W "@COMMANDS@ @TOP@" -- "$cur") )
        return 0
    fi
    cmd="${COMP_WORDS[1]}"
    choices=""
    case "$cmd $prev" in
@CHOICE_CASES@
    esac
    if [[ -n "$choices" ]]; then
        COMPREPLY=( $(compgen -W "$choices" -- "$cur") )
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        opts=""
        case "$cmd" in
@OPTION_CASES@
        esac
        COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
        return 0
    fi
    case "$cmd" in
        @NAME_COMMANDS@)
            COMPREPLY=( $(compgen -W "@NAMES@" -- "$cur") $(compgen -f -X '!*.@(py|json)' -- "$cur") )
            return 0 ;;
    esac
    COMPREPLY=( $(compgen -f -- "$cur") )
}
shopt -s extglob 2>/dev/null
complete -o filenames -F _netproof netproof
"""

ZSH = r"""#compdef netproof
# zsh completion for netproof (netproof completion zsh)
_netproof() {
    local cur prev cmd opts choices
    cur="${words[CURRENT]}"
    prev="${words[CURRENT-1]}"
    if (( CURRENT == 2 )); then
        compadd -- @COMMANDS@ @TOP@
        return 0
    fi
    cmd="${words[2]}"
    choices=""
    case "$cmd $prev" in
@CHOICE_CASES@
    esac
    if [[ -n "$choices" ]]; then
        compadd -- ${=choices}
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        opts=""
        case "$cmd" in
@OPTION_CASES@
        esac
        compadd -- ${=opts}
        return 0
    fi
    case "$cmd" in
        @NAME_COMMANDS@)
            compadd -- @NAMES@
            _files -g '*.(py|json)'
            return 0 ;;
    esac
    _files
}
if [[ "$funcstack[1]" == _netproof ]]; then
    _netproof "$@"
else
    compdef _netproof netproof
fi
"""
