"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``."""

from .chain import ComposedMiddleware, compose

__all__ = ["ComposedMiddleware", "compose"]
