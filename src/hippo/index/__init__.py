"""Vector indexes used by stores that do not search vectors themselves."""
