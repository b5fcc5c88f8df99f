"""Order-safe composition: checking and sorting a middleware list by its declared
constraints, and watching declared layers for effects they did not declare."""
