"""Tools the engines call: a registry, the toolsets over the data sources, and the sources."""
