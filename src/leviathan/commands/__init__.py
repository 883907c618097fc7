"""One module per CLI verb: ``add_arguments(parser)`` and ``run(args) -> int``; argparse number types are in
``values``."""
