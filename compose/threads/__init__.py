"""Crossing between sync and async code: the bridge and its bounded worker threads."""
