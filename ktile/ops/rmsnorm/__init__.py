"""RMSNorm."""
