"""styles: the style library, one module per family of styles (pure data).

Importing this package registers every style in :data:`engine.compose.genres.GENRES`; the
composer's readers of the table (:mod:`~engine.compose.prompt`, :mod:`~engine.compose.band`)
import it first, so they see the whole library. A family module only calls :func:`~engine.compose.genres._g`.
"""
from engine.compose.styles import classical, electronic, groove, more, rock_folk, world  # noqa: F401
