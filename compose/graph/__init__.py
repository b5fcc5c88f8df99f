"""The agent's graph worked out before it is built: plan, schemas, reducers, edges."""
