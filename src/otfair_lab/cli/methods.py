"""``otfair methods``: the registered methods (``list``) and one in detail (``describe``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

import typer

from otfair_lab.cli._common import echo_json, fail, print_table

if TYPE_CHECKING:
    from otfair_lab.experiments.methods import MethodSpec

methods_app = typer.Typer(
    help="List the methods `otfair fit` and `otfair sweep` can run, or describe one.",
    no_args_is_help=False,
    invoke_without_command=True,
)


def _summary(spec: MethodSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "task": spec.task,
        "notions": list(spec.notions),
        "strength": spec.strength_name if spec.has_strength else None,
        "paper": spec.paper,
        "description": spec.description,
    }


def short_paper(paper: str) -> str:
    """Return the authors (and year) of a registry ``paper`` string (the list's paper column).

    ``"Kim et al., fairness through matching (FTM paper), §5.1"`` -> ``"Kim et al."``:
    the text before the first parenthesis, semicolon, or comma followed by anything but
    another author name (a lowercase word, a section sign, "Algorithm", "App.", "Fig.", "Table").
    """
    head = re.split(r" \(|;|, (?=[a-z§]|Alg|App|Fig|Table)", paper, maxsplit=1)[0].strip()
    return head or "-"


def describe_method(spec: MethodSpec) -> dict[str, Any]:
    """Everything ``otfair methods describe`` shows, as a JSON-friendly dict."""
    from otfair_lab.cli._option_docs import option_rows
    from otfair_lab.experiments.methods import describe_option

    options = {name: describe_option(spec, name) for name in spec.option_names()}
    rows = option_rows(spec, describe_option)
    return {
        **_summary(spec),
        "paper": spec.paper,
        "default_notion": spec.notions[0] if spec.notions else None,
        "default_strength": spec.strength_for(None),
        "dataset_strengths": dict(spec.dataset_strengths),
        "strength_grid": list(spec.default_strengths),
        "sensitive_as_input": spec.sensitive_as_input,
        "takes_domains": spec.takes_domains,
        "defaults": dict(spec.defaults),
        "announced": dict(spec.announce),
        "options": options,
        # each option once (a penalty setting's penalty__NAME alias beside it), described
        "option_help": {r["option"]: {k: v for k, v in r.items() if k != "option"} for r in rows},
    }


def _lookup(name: str) -> MethodSpec:
    from otfair_lab.cli._checks import check_method

    check_method(name)  # an unknown name answers before the registry imports torch
    from otfair_lab.experiments.methods import get_method

    try:
        return get_method(name)
    except ValueError as exc:
        fail(str(exc))
        raise  # unreachable: fail exits


@methods_app.callback()
def _default(ctx: typer.Context) -> None:
    """Without a subcommand, ``otfair methods`` lists the methods."""
    if ctx.invoked_subcommand is None:
        list_command(task=None, as_json=False)


@methods_app.command("list")
def list_command(
    task: Annotated[
        str | None, typer.Option("--task", help="Only classification or regression.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One line per method: task, notions, strength, paper, description."""
    from otfair_lab.experiments.methods import get_method, list_methods

    if task not in (None, "classification", "regression"):
        fail(f"--task must be 'classification' or 'regression', got {task!r}")
    specs = [get_method(n) for n in list_methods(task)]  # type: ignore[arg-type]
    if as_json:
        echo_json([_summary(s) for s in specs])
        return
    rows = [
        [
            s.name,
            s.task,
            ", ".join(s.notions) or "fixed",
            s.strength_name if s.has_strength else "-",
            short_paper(s.paper),
            s.description,
        ]
        for s in specs
    ]
    print_table(
        "otfair methods",
        ["method", "task", "notions", "strength", "paper", "description"],
        rows,
        align="left",
    )


@methods_app.command("describe")
def describe_command(
    name: Annotated[str, typer.Argument(help="Method name (`otfair methods list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Paper, task, notions, strength and its grid, defaults and the accepted options."""
    info = describe_method(_lookup(name))
    if as_json:
        echo_json(info)
        return
    info.pop("options")
    help_rows = info.pop("option_help")
    rows = [[k, _cell(v)] for k, v in info.items()]
    print_table(f"otfair methods describe {name}", ["field", "value"], rows, align="left")
    print_table(
        f"options of {name} (-o KEY=VALUE, JSON values)",
        ["option", "expects", "description"],
        [
            [k + (f" (or {r['alias']})" if r["alias"] else ""), r["expects"], r["description"]]
            for k, r in help_rows.items()
        ],
        align="left",
        ratios=[None, 1, 2],  # the description gets the room a narrow terminal has
    )


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value) or "-"
    return "-" if value is None or value == "" else str(value)


def register(app: typer.Typer) -> None:
    """Attach the ``methods`` command group to the root app."""
    app.add_typer(methods_app, name="methods")
