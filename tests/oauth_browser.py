"""A stand-in for a person's browser, for ``BROWSER``: follows the address it is given through
its redirects (to toolwire's loopback address), as a browser would."""

import sys

import httpx2

target = sys.argv[1]
with httpx2.Client(timeout=30) as http:
    for _ in range(5):
        answer = http.get(target)
        if answer.status_code not in (301, 302, 303, 307, 308):
            break
        target = answer.headers["location"]
