"""Proving, from its source, that a wrap layer returns only what its handler returned.

Such a layer (``return await handler(request)``, or ``response = await handler(request)``
and later ``return response``) needs no check of its result: the handler's result was
checked already. The onion then calls it with no frame of its own between it and the
layer outside, which is what costs most in a deep async onion.

The proof is conservative; any doubt means "not proven", and the layer is checked as
before. A function is proven when all of these hold:

- it is a plain Python function (or a method of one) whose source ``inspect`` finds, and
  that source compiles to exactly the function's own bytecode (a file edited since it was
  imported proves nothing);
- every ``return`` in its own body returns ``[await] handler(...)`` or a variable that is
  only ever bound by ``variable = [await] handler(...)``; and its last statement is a
  ``return`` or a ``raise`` (so it never returns ``None`` by falling off its end);
- ``handler`` is never rebound, and is only ever called (and, in an async layer, the call
  awaited at once): it is never passed on, stored or used as a value, so nothing else can
  call it;
- it has no ``try``, ``with`` or ``async with`` anywhere (nested functions included), so it
  cannot see an error raised by its handler before funcware has noted which layer raised
  it.

A proven layer's errors are still noted as its own: when a checked layer (or the onion's
entry) sees an error that no one has noted yet, it looks in the traceback for the deepest
frame of a proven layer right inside it (:func:`deepest_layer`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["deepest_layer", "handler_argument", "passes_through"]

_UNSET = object()
_cache: dict[tuple[types.CodeType, bool], bool] = {}


def _function(func: Callable[..., Any]) -> tuple[types.FunctionType, int] | None:
    """The plain function behind ``func`` and the position of its handler argument."""
    if isinstance(func, types.MethodType):
        inner = func.__func__
        return (inner, 2) if isinstance(inner, types.FunctionType) else None
    return (func, 1) if isinstance(func, types.FunctionType) else None


def handler_argument(func: Callable[..., Any]) -> str | None:
    """The name of ``func``'s handler parameter (its second, after ``self`` for a method)."""
    found = _function(func)
    if found is None:
        return None
    function, position = found
    code = function.__code__
    return code.co_varnames[position] if code.co_argcount > position else None


def passes_through(func: Callable[..., Any], *, is_async: bool) -> bool:
    """Whether ``func`` provably returns only what its handler returned (see module doc)."""
    found = _function(func)
    if found is None:
        return False
    function, position = found
    code = function.__code__
    cached = _cache.get((code, is_async), _UNSET)
    if cached is _UNSET:
        cached = _prove(function, position, is_async)
        _cache[code, is_async] = cached
    return bool(cached)


def _prove(function: types.FunctionType, position: int, is_async: bool) -> bool:
    code = function.__code__
    if code.co_argcount <= position or bool(code.co_flags & inspect.CO_COROUTINE) != is_async:
        return False
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
        return False
    try:
        # The code's own source: a function's would follow ``__wrapped__`` to another's.
        source = textwrap.dedent(inspect.getsource(code))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    defs = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) != 1 or defs[0].name != code.co_name:
        return False
    node = defs[0]
    if not _same_code(node, code):
        return False
    return _returns_handler_result(node, code.co_varnames[position], is_async)


def _same_code(node: ast.FunctionDef | ast.AsyncFunctionDef, code: types.CodeType) -> bool:
    """Whether ``node`` (without decorators) compiles to exactly ``code``'s bytecode."""
    bare = type(node)(**{**node.__dict__, "decorator_list": []})
    body: list[ast.stmt] = [bare]
    if code.co_freevars:  # compile it inside a function that gives it the same closure
        setup = [
            ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(None))
            for name in code.co_freevars
        ]
        body = [
            ast.FunctionDef(
                name="__outer__",
                args=ast.arguments([], [], None, [], [], None, []),
                body=[*setup, bare],
                decorator_list=[],
            )
        ]
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return False
    for candidate in _codes(compiled):
        if candidate.co_name == code.co_name and candidate.co_code == code.co_code:
            return candidate.co_freevars == code.co_freevars
    return False


def _codes(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_codes(const))
    return found


def _call_of(expr: ast.expr | None, handler: str, is_async: bool) -> bool:
    """Whether ``expr`` is ``await handler(...)`` (``handler(...)`` for a sync layer)."""
    if is_async:
        if not isinstance(expr, ast.Await):
            return False
        expr = expr.value
    # Its arguments cannot mention ``handler``: it is only ever called (checked first).
    if not isinstance(expr, ast.Call):
        return False
    return isinstance(expr.func, ast.Name) and expr.func.id == handler


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own scope (not inside nested functions, lambdas, classes)."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        sub = stack.pop()
        found.append(sub)
        if not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(sub))
    return found


def _bound_names(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """Every name bound anywhere under ``node``, with the node that binds it."""
    bound: list[tuple[str, ast.AST]] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            bound.append((sub.id, sub))
        elif isinstance(sub, ast.arg):
            bound.append((sub.arg, sub))
        elif isinstance(sub, ast.alias):
            bound.append(((sub.asname or sub.name).split(".")[0], sub))
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.append((sub.name, sub))
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            bound.extend((name, sub) for name in sub.names)
        elif isinstance(sub, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and sub.name:
            bound.append((sub.name, sub))
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            bound.append((sub.rest, sub))
    return bound


_OBSERVES = (ast.Try, ast.With, ast.AsyncWith, *([ast.TryStar] if hasattr(ast, "TryStar") else []))


def _returns_handler_result(
    node: ast.FunctionDef | ast.AsyncFunctionDef, handler: str, is_async: bool
) -> bool:
    if not node.body or not isinstance(node.body[-1], (ast.Return, ast.Raise)):
        return False
    if any(isinstance(sub, _OBSERVES) for sub in ast.walk(node)):
        return False
    # ``handler`` is only ever called, the call awaited at once in an async layer.
    parents: dict[ast.AST, ast.AST] = {}
    for sub in ast.walk(node):
        for child in ast.iter_child_nodes(sub):
            parents[child] = sub
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == handler:
            call = parents.get(sub)
            if not (isinstance(call, ast.Call) and call.func is sub):
                return False
            if is_async and not isinstance(parents.get(call), ast.Await):
                return False
    # Variables that hold nothing but a handler result.
    own = _own_nodes(node)
    results: set[str] = set()
    allowed: set[int] = set()
    for sub in own:
        if (
            isinstance(sub, ast.Assign)
            and len(sub.targets) == 1
            and isinstance(sub.targets[0], ast.Name)
            and _call_of(sub.value, handler, is_async)
        ):
            results.add(sub.targets[0].id)
            allowed.add(id(sub.targets[0]))
    parameters = [*node.args.posonlyargs, *node.args.args]
    for name, binder in _bound_names(node):
        if name == handler and not any(binder is param for param in parameters):
            return False
        if name in results and id(binder) not in allowed:
            return False
    for sub in own:
        if isinstance(sub, ast.Return):
            value = sub.value
            if _call_of(value, handler, is_async):
                continue
            if isinstance(value, ast.Name) and value.id in results:
                continue
            return False
    return True


def deepest_layer(
    exc: BaseException,
    handlers: Sequence[Any],
    codes: dict[types.CodeType, str],
    start: int,
    stop: int,
) -> int:
    """Index of the deepest layer in ``start..stop`` whose frame is in ``exc``'s traceback.

    ``codes`` maps the code of each proven layer to the name of its handler argument; a
    frame is layer ``i``'s when its code is a proven layer's and its handler argument is
    ``handlers[i]`` (the handler given to layer ``i``), so layers that share one function
    are told apart. ``start`` when no such frame is found.
    """
    at = {id(handler): index for index, handler in enumerate(handlers)}
    found = start
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        argument = codes.get(frame.f_code)
        if argument is not None:
            try:
                index = at.get(id(frame.f_locals.get(argument)), -1)
            except Exception:  # a frame whose locals cannot be read: not one of ours
                index = -1
            if found < index <= stop:
                found = index
        tb = tb.tb_next
    return found
