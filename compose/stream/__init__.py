"""What an agent streams: transformers and metadata, hidden model calls, guards' release."""
