"""Migration scripts, applied in order by `NodeStore`."""
