"""Running the agent's steps: node hooks, the model and tool nodes, and what a run
refuses or remembers for its errors (jumps, unknown keys, unresumable interrupts), and
cleanup that always runs."""
