"""mtboard — an open machine-translation evaluation arena.

The data flows one way: corpus → method → translations → checks → metrics → judge → run card → validation → site
(see ARCHITECTURE in the project docs).
"""

__version__ = "0.6.0"
HARNESS_VERSION = __version__
