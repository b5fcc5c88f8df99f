"""The agent's graph, worked out before it is built: the plan, state schemas and reducers,
the model argument, argument checks and the edges between steps."""
