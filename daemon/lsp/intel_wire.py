"""The ``ided/intel/*`` wire, derived from each capability's params and result models.

A capability served over LSP (``Capability.lsp_method``; ``lsp_elsewhere`` unset) takes and answers JSON
made from its own pydantic models by the rules below, so the LSP answer carries every field the MCP tool
and the daemon answer carry (nothing is restated by hand; a field added to a model is on the wire).

Params (``capability_params``): each field of the params model by its camelCase name, except the place,
which travels as LSP names it: ``textDocument`` (``{"uri"}``) for ``file``, ``position`` (0-based, in the
negotiated encoding) for ``line`` and ``column``. Values are checked strictly (a string where a number
belongs is invalid params, not coerced); keys the model does not name are ignored, as LSP clients expect.

Result (``wire_result``): every field of the result model by its camelCase name, always sent (``null``
when absent), enums by value, tuples as lists, with places made LSP places:

- a ``Location`` field is an LSP ``Location`` (``uri``, ``range``) and its other fields (``in_workspace``,
  ``line_text``) sit beside it (``inWorkspace``, ``lineText``);
- a ``SourceRange`` is an LSP ``Range`` in the file the model it belongs to is about: its ``path`` field,
  else its ``location``'s file, else its parent's; a field ``x`` with a sibling ``x_path`` is in that file;
- a ``path`` field (workspace-relative) is sent as ``uri``, an ``x_path`` field as ``xUri``.

``wire_problems(model)`` says what of a result model these rules cannot place (a range with no file to be
in): the LSP front's test holds every served capability to none.
"""

from __future__ import annotations

import json
import typing
from enum import Enum
from typing import Any

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

from daemon.core.intel_models import Location, SourceRange
from daemon.lsp.convert import PositionMapper
from daemon.lsp.protocol import extend_messages, request_types
from daemon.service.intel.capabilities import CAPABILITIES
from daemon.service.intel.capability import Capability

__all__ = ["SERVED", "capability_params", "lsp_field_names", "wire_problems", "wire_result"]

SERVED: tuple[Capability[Any, Any], ...] = tuple(c for c in CAPABILITIES if c.lsp_elsewhere is None)
"""The capabilities the LSP front serves as ``ided/intel/*`` (each other one says where, or why not)."""

_PLACE_FIELDS = {"file", "line", "column"}


class _Place(BaseModel):
    """The LSP half of a place: a document and a position in it."""

    model_config = ConfigDict(strict=True, extra="ignore")

    class Document(BaseModel):
        model_config = ConfigDict(strict=True, extra="ignore")
        uri: str

    class Position(BaseModel):
        model_config = ConfigDict(strict=True, extra="ignore")
        line: int
        character: int

    text_document: Document | None = None
    position: Position | None = None


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _snake_case(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


# -- params ----------------------------------------------------------------------------------------


def capability_params(capability: Capability[Any, Any], mapper: PositionMapper, raw: Any, method: str) -> Any:
    """The capability's params from the LSP params ``raw`` (``JsonRpcInvalidParams`` when they do not fit)."""
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(f"invalid params for {method}: an object is expected")
    fields = capability.params.model_fields
    given = {_snake_case(str(key)): value for key, value in typing.cast("dict[str, Any]", raw).items()}
    values = {name: value for name, value in given.items() if name in fields and name not in _PLACE_FIELDS}
    try:
        place = _Place.model_validate({k: given[k] for k in ("text_document", "position") if k in given})
    except ValidationError as exc:
        raise JsonRpcInvalidParams(f"invalid params for {method}: {_first_error(exc)}") from None
    if "file" in fields:
        if place.text_document is not None:
            values["file"] = mapper.path_of(place.text_document.uri)
        if place.position is not None:
            if "file" not in values:
                raise JsonRpcInvalidParams(f"invalid params for {method}: a position needs its textDocument")
            position = types.Position(line=place.position.line, character=place.position.character)
            values["line"], values["column"] = mapper.from_client(values["file"], position)
        if "symbol" in fields and values.get("symbol") is None and "line" not in values:
            raise JsonRpcInvalidParams(f"invalid params for {method}: give symbol, or textDocument and position")
        if "line" in fields and fields["line"].is_required() and "line" not in values:
            raise JsonRpcInvalidParams(f"invalid params for {method}: position: Field required")
    try:
        return capability.params.model_validate_json(json.dumps(values), strict=True)
    except ValidationError as exc:
        raise JsonRpcInvalidParams(f"invalid params for {method}: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(camel_case(str(part)) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


# -- results ---------------------------------------------------------------------------------------


def wire_result(mapper: PositionMapper, result: BaseModel) -> dict[str, Any]:
    """``result`` as the LSP wire carries it (see the module docstring)."""
    return _model(mapper, result, None)


def _context(model: BaseModel, inherited: str | None) -> str | None:
    """The file a model's ranges are in: its ``path``, else its ``location``'s, else its parent's."""
    values = model.__dict__
    path, location = values.get("path"), values.get("location")
    if isinstance(path, str):
        return path
    return location.path if isinstance(location, Location) else inherited


def _model(mapper: PositionMapper, model: BaseModel, inherited: str | None) -> dict[str, Any]:
    here = _context(model, inherited)
    fields = type(model).model_fields
    out: dict[str, Any] = {}
    for name in fields:
        value = model.__dict__[name]
        key = camel_case(name)
        if name == "path" or (name.endswith("_path") and isinstance(value, str)):
            out[key[: -len("Path")] + "Uri" if name != "path" else "uri"] = mapper.uri(value) if value else None
            continue
        if isinstance(value, Location):
            out[key] = _location(mapper, value)
            out["inWorkspace"] = value.in_workspace
            out["lineText"] = value.line_text
            continue
        own_path = model.__dict__.get(f"{name}_path")
        out[key] = _value(mapper, value, own_path if isinstance(own_path, str) else here)
    return out


def _location(mapper: PositionMapper, location: Location) -> dict[str, Any]:
    return {"uri": mapper.uri(location.path), "range": _range(mapper, location.path, location.range)}


def _range(mapper: PositionMapper, path: str, source: SourceRange) -> dict[str, Any]:
    lsp = mapper.range(path, source)
    return {
        "start": {"line": lsp.start.line, "character": lsp.start.character},
        "end": {"line": lsp.end.line, "character": lsp.end.character},
    }


def _value(mapper: PositionMapper, value: Any, path: str | None) -> Any:
    if isinstance(value, SourceRange):
        if path is None:
            raise ValueError("a range with no file to be in: see wire_problems")
        return _range(mapper, path, value)
    if isinstance(value, Location):
        return {**_location(mapper, value), "inWorkspace": value.in_workspace, "lineText": value.line_text}
    if isinstance(value, BaseModel):
        return _model(mapper, value, path)
    if isinstance(value, tuple | list):
        return [_value(mapper, item, path) for item in typing.cast("tuple[Any, ...]", value)]
    if isinstance(value, dict):
        return {str(k): _value(mapper, v, path) for k, v in typing.cast("dict[Any, Any]", value).items()}
    if isinstance(value, Enum):
        return value.value
    return value


# -- what a model gives the wire ---------------------------------------------------------------------


def _inner_types(annotation: Any) -> list[Any]:
    """The classes an annotation holds (``tuple[X, ...]``, ``X | None``, ``dict[str, X]`` -> ``X``)."""
    args = typing.get_args(annotation)
    if not args:
        return [annotation]
    return [inner for arg in args if arg is not Ellipsis for inner in _inner_types(arg)]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    return [t for t in _inner_types(annotation) if isinstance(t, type) and issubclass(t, BaseModel)]


def wire_problems(model: type[BaseModel], *, placed: bool = False, where: str = "") -> list[str]:
    """What ``wire_result`` could not send of ``model``'s answers: each range with no file to be in."""
    fields = model.model_fields
    placed = placed or "path" in fields or any(Location in _models_in(f.annotation) for f in fields.values())
    problems: list[str] = []
    for name, field in fields.items():
        at = f"{where}{model.__name__}.{name}"
        inner = _models_in(field.annotation)
        if SourceRange in inner and not (placed or f"{name}_path" in fields):
            problems.append(f"{at}: a range with no file (give the model a path or a location, or {name}_path)")
        for sub in inner:
            if sub not in (SourceRange, Location):
                problems += wire_problems(sub, placed=placed, where=f"{at} -> ")
    return problems


def lsp_field_names(capability: Capability[Any, Any]) -> tuple[set[str], set[str]]:
    """The camelCase names of the capability's LSP params and result fields (nested ones included)."""
    params = {camel_case(n) for n in capability.params.model_fields if n not in _PLACE_FIELDS}
    if "file" in capability.params.model_fields:
        params.add("textDocument")
    if "line" in capability.params.model_fields:
        params.add("position")
    return params, _result_names(capability.result)


def _result_names(model: type[BaseModel]) -> set[str]:
    names: set[str] = set()
    for name, field in model.model_fields.items():
        inner = _models_in(field.annotation)
        if name == "path":
            names.add("uri")
        elif name.endswith("_path"):
            names.add(camel_case(name)[: -len("Path")] + "Uri")
        elif Location in inner:
            names |= {camel_case(name), "inWorkspace", "lineText"}
        else:
            names.add(camel_case(name))
        for sub in inner:
            if sub not in (SourceRange, Location):
                names |= _result_names(sub)
    return names


def _message_name(capability: Capability[Any, Any]) -> str:
    return "".join(part[:1].upper() + part[1:] for part in capability.lsp_method.split("/")[1:])


extend_messages(
    {
        c.lsp_method: request_types(_message_name(c), c.lsp_method, dict[str, Any], typing.cast("type", Any))
        for c in SERVED
    }
)
