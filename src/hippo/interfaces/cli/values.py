"""Reading the values of options and arguments without pydantic.

Typer from 0.29 on turns each value into its annotated type through a pydantic ``TypeAdapter``,
built when the parameter is first processed: every command then imports pydantic, 85 ms of CPU
on the 2-vCPU machine, and builds an adapter a parameter, 1-2 ms each (bench/cli_start.py).
hippo's commands take ``str``, ``int``, ``float``, ``bool``, an ``Enum`` and lists of ``str``
(and one ``Path``, left to Typer), which need none of that: :func:`read_plainly` gives such a
parameter a reader of its own, with the same contract (``None`` stays ``None``, or ``()`` for a
repeatable option; a bad value is a usage error, exit 2). With an older Typer (Click's types do
the work) it changes nothing.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, get_args, get_origin

import typer

__all__ = ["Plain", "read_plainly"]

_WHOLE = re.compile(r"[+-]?\d+")
_SIMPLE = (str, int, float, bool)
_YES, _NO = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


class Plain:
    """One parameter's reader: what Typer's ``RuntimeParam.coerce`` does, for the simple types."""

    def __init__(self, kind: type, minimum: float | None, maximum: float | None) -> None:
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        repeated = param.multiple or param.nargs == -1
        if value is None:
            return () if repeated else None
        if not repeated:
            return self._one(value, param, ctx)
        if isinstance(value, str):
            raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
        return [self._one(item, param, ctx) for item in value]

    def _one(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            read = self._read(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        if self.minimum is not None and read < self.minimum:
            raise typer.BadParameter(f"{read} is less than {self.minimum}.", ctx=ctx, param=param)
        if self.maximum is not None and read > self.maximum:
            raise typer.BadParameter(f"{read} is more than {self.maximum}.", ctx=ctx, param=param)
        return read

    def _read(self, value: Any) -> Any:
        if isinstance(value, self.kind) and (self.kind is bool or not isinstance(value, bool)):
            return value
        text = str(value).strip()
        if self.kind is bool:  # a flag's value is a bool already; this is for the odd string
            if text.lower() not in _YES | _NO:
                raise ValueError(f"{value!r} is neither true nor false.")
            return text.lower() in _YES
        if self.kind is int:
            if not _WHOLE.fullmatch(text):
                raise ValueError(f"{value!r} is not a whole number.")
            try:
                return int(text)
            except ValueError:  # past Python's 4,300 digits
                raise ValueError(f"a number of {len(text):,} digits is not a whole number hippo takes.") from None
        if self.kind is float:
            try:
                return float(text)
            except ValueError:
                raise ValueError(f"{value!r} is not a number.") from None
        if issubclass(self.kind, Enum):
            try:
                return self.kind(text)
            except ValueError:
                choices = ", ".join(str(member.value) for member in self.kind)
                raise ValueError(f"{value!r} is not one of {choices}.") from None
        return str(value)


def read_plainly(param: Any) -> None:
    """Give ``param`` a :class:`Plain` reader when Typer would build a pydantic one for a simple type."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(param, "_runtime_param", False) is not None:
        return  # not Typer's pydantic coercion, or a reader already there
    annotation = descriptor.annotation
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        annotation = str
    simple = annotation in _SIMPLE or (isinstance(annotation, type) and issubclass(annotation, Enum))
    if simple and descriptor.file_annotation is None and getattr(descriptor.parameter_info, "parser", None) is None:
        info = descriptor.parameter_info
        param._runtime_param = Plain(annotation, info.min, info.max)
