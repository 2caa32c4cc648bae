"""encode."""
