"""Rotary position embedding (NeoX and GPT-J layouts), q and k together."""
