"""Running the agent's steps: node hooks, the model and tool nodes, each run's entry."""
