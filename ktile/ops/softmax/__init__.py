"""Row softmax."""
