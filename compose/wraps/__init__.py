"""The onion: wrap layers folded into chains built once, and what their results become."""
