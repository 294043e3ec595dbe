"""Adapters: the only builder code that touches files, packages, models, engines or the network."""
