"""What an agent streams: stream transformers and metadata, sub-agent handles, hidden
model calls, and guards that govern the stream (buffering, the sliding window, release)."""
