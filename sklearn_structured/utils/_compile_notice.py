"""One line on stderr when numba starts compiling, so a first run is not silent."""

import sys

_installed = False


def announce_compilation(stream=None):
    """Print "compiling kernels (first run only)" once, when the first kernel compiles.

    Loading a kernel from numba's on-disk cache compiles nothing, so the line
    appears only on a first run (or after an upgrade invalidates the cache).
    Installing the listener is idempotent; importing numba is deferred to
    the first call.
    """
    global _installed
    if _installed:
        return
    from numba.core import event

    class _Notice(event.Listener):
        announced = False

        def on_start(self, event_):
            if not self.announced:
                self.announced = True
                print("compiling kernels (first run only; cached afterwards) ...",
                      file=stream or sys.stderr, flush=True)

        def on_end(self, event_):
            pass

    event.register("numba:compile", _Notice())
    _installed = True
