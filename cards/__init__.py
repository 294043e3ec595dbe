"""Dataset card templates and per-family prose (data, not code).

``templates/dataset.md.j2`` is the card body; ``<family>.md`` holds hand-written
sections (motivation, limitations, ...) merged into it by ``builders.release.card``.
"""
