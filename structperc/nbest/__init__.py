"""nbest."""
