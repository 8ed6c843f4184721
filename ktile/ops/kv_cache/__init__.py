"""kv_cache."""
