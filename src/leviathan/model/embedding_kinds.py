"""The embedding kinds a model may use, in a module of its own that imports nothing.

``ownership`` names a demo's arms by them; importing them from ``model.config`` closed an import circle (config ->
config_target -> ownership -> model.config -> config) once ``config.dump_yaml`` checked where it writes (issue 30
round 22, S281). ``model.config`` takes them from here.
"""

EMBEDDING_KINDS: tuple[str, ...] = ("dense_tied", "dense_untied", "leviathan", "factorized", "compositional")
