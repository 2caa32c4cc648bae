"""rerank."""
