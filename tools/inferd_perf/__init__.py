"""inferd-perf: a load generator for inferd and its competitors (see __main__.py)."""
