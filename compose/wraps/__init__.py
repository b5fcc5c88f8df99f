"""The onion: ``wrap_model_call`` / ``wrap_tool_call`` layers folded into chains built once,
and what their results and commands become."""
