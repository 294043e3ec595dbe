"""xlbench evaluators: score any model on xlbench datasets.

Light by design: numpy, pyarrow, datasets and polars at import time; torch and
transformers only inside :mod:`evaluators.encoders`, imported lazily.
"""

__version__ = "0.1.0"
