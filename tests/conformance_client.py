"""A client for the MCP conformance suite's client scenarios, built on toolwire's own client API.

The suite runs ``python conformance_client.py URL`` with the scenario's name in
``MCP_CONFORMANCE_SCENARIO`` and, where the scenario gives credentials, a JSON object in
``MCP_CONFORMANCE_CONTEXT``. The client connects with `toolwire.mcp.connect` (OAuth through
`toolwire.mcp.auth.OAuth`: the authorization step is done as a browser would, following the
authorization server's redirect without a person), lists the tools and calls each (with
the arguments the scenario expects, where it expects some); an elicitation request is
answered with every field left to its default.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx2

from toolwire.mcp import connect
from toolwire.mcp.auth import OAuth

CALLS: dict[str, dict[str, Any]] = {
    "add_numbers": {"a": 5, "b": 3},
    "test_client_elicitation_defaults": {},
}


async def authorize(url: str) -> str:
    """What the browser does: ask the authorization server, which answers with a redirect to
    the loopback address; that address (with the code) is the answer."""
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.get(url)
    location = answer.headers.get("location")
    if answer.status_code not in (301, 302, 303, 307, 308) or not location:
        raise SystemExit(f"the authorization server answered {answer.status_code} without a "
                         "redirect")
    return str(location)


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth | None:
    if not scenario.startswith("auth/"):
        return None
    common: dict[str, Any] = {"keep": False, "authorize": authorize}
    if "idp_id_token" in context:
        return OAuth(grant="cross_app", client_id=context["client_id"],
                     client_secret=context["client_secret"], id_token=context["idp_id_token"],
                     idp_token_endpoint=context["idp_token_endpoint"],
                     idp_client_id=context.get("idp_client_id"), keep=False)
    if "private_key_pem" in context:
        return OAuth(grant="client_credentials", client_id=context["client_id"],
                     private_key=context["private_key_pem"],
                     signing_algorithm=context.get("signing_algorithm", "ES256"), keep=False)
    if scenario.startswith("auth/client-credentials"):
        return OAuth(grant="client_credentials", client_id=context["client_id"],
                     client_secret=context["client_secret"], keep=False)
    if "client_id" in context:
        return OAuth(client_id=context["client_id"],
                     client_secret=context.get("client_secret"), **common)
    return OAuth(client_metadata_url="https://conformance-test.local/client-metadata.json",
                 **common)


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with connect(url, oauth=oauth_for(scenario, context), timeout=30,
                       answer=lambda question, choices: "") as server:
        for tool in server.listing:
            await server.call_raw(tool.name, CALLS.get(tool.name, {}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
