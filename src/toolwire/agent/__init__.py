"""The agent loop and what it drives: run state, dispatch, structured output, resume, run log.

``loop`` holds `Agent`; ``run`` the values of one run (`RunStop`, `Step`, `RunResult`,
`AgentRun`, `RunState`); ``steps`` starting, resuming and finishing a run; ``dispatch`` looks
tools up, checks, approves and runs them; ``runlog`` writes and reads the JSONL run log. Talks
to a model only through `toolwire.protocol.Model`: never imports codecs' wire modules, the
transport or the client. Nothing is re-exported here.
"""
