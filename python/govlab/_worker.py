"""The local pool's worker process: ``python -m govlab._worker PARENT_PID REQUESTS ANSWERS STDERR POLL_S``.

An entry point of govlab's own (:func:`govlab.sweep.worker.serve`), so that a
worker never imports the module the user ran (:mod:`govlab.sweep.local`).
"""

import sys

from govlab.sweep.worker import serve

if __name__ == "__main__":
    parent, requests, answers, stderr = (int(a) for a in sys.argv[1:5])
    serve(parent, requests, answers, stderr, float(sys.argv[5]))
