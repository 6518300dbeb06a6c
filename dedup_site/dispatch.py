"""Work handed to the workers, by name.

A service says *what* should run after its transaction commits (`on_commit("name",
args)`); the task modules, the edge that knows Celery, register *how* (`register`). So
services never import tasks, and the same service runs from a task, a command, a view or
a test. Every app's tasks module registers its handlers when it is imported (Django's
app registry imports them at start-up, see the apps' `ready`)."""

from collections.abc import Callable
from typing import Any

Handler = Callable[..., Any]

_handlers: dict[str, Handler] = {}


def register(name: str, handler: Handler) -> None:
    """Route the work called `name` to `handler` (a task's `delay_on_commit`)."""
    _handlers[name] = handler


def on_commit(name: str, *args: Any) -> None:
    """Run the work called `name` once the current transaction commits."""
    try:
        handler = _handlers[name]
    except KeyError:
        raise LookupError(f"no task is registered for {name!r}") from None
    handler(*args)
