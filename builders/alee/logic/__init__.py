"""alee's pure code: AMR edit rules, discourse frames, paragraph edits, the NLI decision, the pipeline.

Nothing here reads files or loads models: the parser, generator, NLI model and
WordNet lexicon arrive as callables and values (:class:`~builders.alee.logic.pipeline.Stages`),
built in :mod:`builders.alee.build` from :mod:`builders.adapters`.
"""
